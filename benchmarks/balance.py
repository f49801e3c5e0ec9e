"""Balance benchmark: ci-shards' planner next to pytest-split's two algorithms, on real timings.

For every durations file in ../shared/data/durations and N in {2, 4, 8, 16, 32}:
- makespan / LB, where LB = max(total/N, longest test, N-th + (N+1)-th longest test);
- fragmentation: (file, shard) pairs per file (1.0 = no file cut; the floor is max(1, N/files));
- planning time;
- auto vs test: the slowest shard of granularity ``auto`` over that of ``test`` (issue 10: ≤ 1.02),
  per plan and the worst, on the real files and on seeded adversarial instances (few large tests,
  more shards than large tests, one dominant file, many equal tests, heavy-tailed durations).
All plans are scored with the same cost per test (the file's seconds, at least 1 ms, as the planner
counts them). pytest-split's algorithm objects are called on the same data in the same run, with the
items in sorted node-id order (pytest-split's own file order, close to collection order).
Then the time to plan 100,000 synthetic items into 64 shards.

Run by hand:  .venv/bin/python benchmarks/balance.py [--data DIR]   (prints Markdown to stdout)
"""

from __future__ import annotations

import argparse
import math
import platform
import random
import statistics
import subprocess
import sys
import time
from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pytest_split.algorithms import Algorithms

from ci_shards.model.matching import item_file
from ci_shards.model.plan import Granularity
from ci_shards.plan.planner import fragmentation, lower_bound, plan_items
from ci_shards.plan.units import MICRO, MIN_COST
from ci_shards.timings.store import load_timings

REPO = Path(__file__).resolve().parent.parent
SHARDS = (2, 4, 8, 16, 32)
Item = namedtuple("Item", "nodeid")  # what pytest-split's algorithms read from a pytest item

Splitter = Callable[[Sequence[str], Mapping[str, float], int], list[list[str]]]


def cost(seconds: float) -> int:
    return max(MIN_COST, round(seconds * MICRO))


def ci_shards(granularity: Granularity) -> Splitter:
    def split(items: Sequence[str], durations: Mapping[str, float], n: int) -> list[list[str]]:
        return [list(s.items) for s in plan_items(items, durations, n, granularity=granularity).shards]

    return split


def pytest_split(name: str) -> Splitter:
    algorithm = Algorithms[name].value

    def split(items: Sequence[str], durations: Mapping[str, float], n: int) -> list[list[str]]:
        groups = algorithm(n, [Item(i) for i in items], dict(durations))
        return [[it.nodeid for it in g.selected] for g in groups]

    return split


SPLITTERS: dict[str, Splitter] = {
    "ci-shards auto": ci_shards(Granularity.AUTO),
    "ci-shards test": ci_shards(Granularity.TEST),
    "ci-shards file": ci_shards(Granularity.FILE),
    "pytest-split least_duration": pytest_split("least_duration"),
    "pytest-split duration_based_chunks": pytest_split("duration_based_chunks"),
}


def score(groups: list[list[str]], durations: Mapping[str, float], lb: int) -> tuple[float, float]:
    pairs = sum(len({item_file(i) for i in g}) for g in groups)
    files = len({item_file(i) for g in groups for i in g})
    return makespan(groups, durations) / lb, pairs / files


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def makespan(groups: list[list[str]], durations: Mapping[str, float]) -> int:
    return max(sum(cost(durations[i]) for i in g) for g in groups)


def balance(data: Path) -> tuple[list[str], list[str]]:
    rows: dict[str, dict[str, list[float]]] = {name: {"ratio": [], "frag": [], "ms": []} for name in SPLITTERS}
    tails: list[tuple[float, str]] = []  # (auto / test makespan, case)
    floors: list[float] = []
    real_floors: list[float] = []  # a file longer than LB needs ceil(file / LB) shards anyway
    per_case: list[str] = []
    for path in sorted(data.iterdir()):
        durations = load_timings(path).estimates()
        items = sorted(durations)
        files = len({item_file(i) for i in items})
        for n in SHARDS:
            lb = lower_bound([cost(durations[i]) for i in items], n)
            floors.append(max(1.0, n / files))
            sizes: dict[str, int] = {}
            for item in items:
                sizes[item_file(item)] = sizes.get(item_file(item), 0) + cost(durations[item])
            real_floors.append(max(floors[-1], sum(math.ceil(s / lb) for s in sizes.values()) / files))
            cells = []
            spans: dict[str, int] = {}
            for name, split in SPLITTERS.items():
                start = time.perf_counter()
                groups = split(items, durations, n)
                elapsed = (time.perf_counter() - start) * 1000
                assert sorted(i for g in groups for i in g) == items, (name, path.name, n)
                ratio, frag = score(groups, durations, lb)
                spans[name] = makespan(groups, durations)
                rows[name]["ratio"].append(ratio)
                rows[name]["frag"].append(frag)
                rows[name]["ms"].append(elapsed)
                cells.append(f"{ratio:.3f} / {frag:.2f}")
            short = path.name.split("__")[1]
            tail = spans["ci-shards auto"] / spans["ci-shards test"]
            tails.append((tail, f"{short} N={n}"))
            per_case.append(f"| {short} | {len(items)} | {files} | {n} | " + " | ".join(cells) + f" | {tail:.4f} |")
    summary = [
        "| splitter | makespan/LB mean | p95 | worst | fragmentation mean | planning ms mean | max |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for name, r in rows.items():
        summary.append(
            f"| {name} | {statistics.mean(r['ratio']):.4f} | {p95(r['ratio']):.4f} | {max(r['ratio']):.4f} |"
            f" {statistics.mean(r['frag']):.2f} | {statistics.mean(r['ms']):.1f} | {max(r['ms']):.1f} |"
        )
    summary.append(f"| floor max(1, N/files) | | | | {statistics.mean(floors):.2f} | | |")
    summary.append(f"| floor with ceil(file/LB) shards per file | | | | {statistics.mean(real_floors):.2f} | | |")
    worst = max(tails)
    summary += [
        "",
        f"auto vs test granularity (slowest shard, auto / test) on these files: worst **{worst[0]:.4f}**"
        f" ({worst[1]}), mean {statistics.mean(t for t, _ in tails):.4f} (target ≤ 1.02)",
    ]
    header = "| suite | tests | files | N | " + " | ".join(SPLITTERS) + " | auto/test |"
    detail = [header, "|---|--:|--:|--:|" + "---|" * len(SPLITTERS) + "--:|", *per_case]
    return summary, detail


def adversarial(count: int = 300) -> str:
    """Seeded instances of the shapes that used to leave a balance tail in ``auto``."""
    rnd = random.Random(20261130)
    tails: list[tuple[float, str]] = []
    frags: dict[Granularity, list[float]] = {Granularity.AUTO: [], Granularity.TEST: []}
    for case in range(count):
        kind = ("few-large", "shards-over-large", "dominant", "equal", "heavy", "mixed")[case % 6]
        files, shards = rnd.randint(1, 30), rnd.choice((2, 4, 8, 16, 32))
        large = rnd.randint(1, shards - 1) if kind == "shards-over-large" and shards > 1 else rnd.randint(1, 12)
        durations: dict[str, float] = {}
        for n in range(rnd.randint(20, 400)):
            file = 0 if kind == "dominant" and rnd.random() < 0.5 else rnd.randrange(files)
            if kind == "equal":
                seconds = 5.0
            elif kind == "dominant":
                seconds = rnd.uniform(10, 40) if file == 0 else rnd.uniform(0, 1)
            elif kind == "heavy":
                seconds = min(3600.0, rnd.paretovariate(1.1))
            elif kind in {"few-large", "shards-over-large"}:
                seconds = rnd.uniform(20, 40) if n < large else rnd.uniform(0, 2)
            else:
                seconds = rnd.uniform(20, 40) if rnd.random() < 0.5 else rnd.uniform(0.1, 3)
            durations[f"tests/test_{file}.py::test_{n}"] = round(seconds, 3)
        spans = {}
        for granularity, seen in frags.items():
            plan = plan_items(durations, durations, shards, granularity=granularity)
            spans[granularity] = plan.estimated_makespan
            seen.append(fragmentation(plan))
        tails.append((spans[Granularity.AUTO] / spans[Granularity.TEST], f"{kind}, {len(durations)} tests, N={shards}"))
    worst = max(tails)
    return (
        f"{count} seeded adversarial instances (6 shapes): auto / test slowest shard worst **{worst[0]:.4f}**"
        f" ({worst[1]}), mean {statistics.mean(t for t, _ in tails):.4f};"
        f" fragmentation mean auto {statistics.mean(frags[Granularity.AUTO]):.2f}"
        f" vs test {statistics.mean(frags[Granularity.TEST]):.2f}"
    )


def large(items_count: int = 100_000, shards: int = 64, files: int = 5_000) -> str:
    """Planning time for a big suite; ``files=items_count`` gives about one item per file."""
    rnd = random.Random(20261130)
    modules = [rnd.randrange(files) for _ in range(items_count)]
    items = [f"tests/pkg{m % 50}/test_m{m}.py::test_{n}" for n, m in enumerate(modules)]
    durations = {i: rnd.lognormvariate(-3, 1.5) for i in items}
    walls, cpus = [], []
    for _ in range(3):  # best of 3: the machine may be shared
        start, start_cpu = time.perf_counter(), time.process_time()
        plan = plan_items(items, durations, shards)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    ratio = plan.estimated_makespan / plan.lower_bound_seconds
    return (
        f"{items_count:,} items in {len({item_file(i) for i in items}):,} files into {shards} shards (auto):"
        f" {min(walls):.2f} s wall ({min(cpus):.2f} s CPU), best of 3;"
        f" makespan/LB {ratio:.4f}, {plan.files_cut} files cut"
    )


def machine() -> str:
    uname = " ".join(platform.uname())
    try:
        cores = subprocess.run(["nproc"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        cores = "?"
    return f"`{uname}`, nproc {cores}, Python {sys.version.split()[0]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--data", type=Path, default=REPO.parent / "shared" / "data" / "durations", help="durations folder"
    )
    args = parser.parse_args()
    summary, detail = balance(args.data)
    print(f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine()}.")
    print()
    print("\n".join(summary))
    print()
    print(f"- {adversarial()}")
    print(f"- {large()}")
    print(f"- {large(files=100_000)}")
    print()
    print("Per suite and N (makespan/LB / fragmentation):")
    print()
    print("\n".join(detail))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
