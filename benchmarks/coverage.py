"""Cost of ``run --coverage`` and of the map, and the fold of 64 shards next to coverage.py's own tools.

    .venv/bin/python benchmarks/coverage.py                       # this repository's tests/unit as the suite
    .venv/bin/python benchmarks/coverage.py --suite tests/unit --repeat 2 --shards 64
    .venv/bin/python ../benchmarks/coverage.py --equivalence PROJECT   # 4 shards vs serial, line for line

1. Overhead: the suite three ways, exactly as ``ci-shards run --pytest`` starts it (wall and CPU):
   - ``none``: ``python -m pytest SUITE``;
   - ``coverage``: under ``ci_shards.coverage.launch`` (coverage.py, the project's config, subprocesses);
   - ``coverage + map``: the same with the per-test-file context plugin (``--coverage-map``, the default).
2. Fold: the measured data (with the map) is split into ``--shards`` shard folders the way sharding
   splits it (each test file's lines into the shard its file hashes to; the lines run while
   collecting into every shard), each with its outcome.json. Then, in the same run:
   - ``ours``: ``publish`` = fold (combine, analyse, hash) + coverage.json + coverage.xml + lcov.info;
   - ``reference``: ``coverage combine --keep`` + ``coverage xml`` on the same data files.
   Each in a fresh subprocess, ``--repeat`` times, median shown. Prints Markdown for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

# this file is named coverage.py: its folder must not shadow the coverage package it measures with
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from coverage import CoverageData  # noqa: E402

from ci_shards.coverage.launch import DATA_STEM  # noqa: E402
from ci_shards.model.outcome import Outcome, ShardStatus  # noqa: E402
from ci_shards.model.plan import Granularity, Plan, ShardPlan  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
RC = "[run]\nrelative_files = True\n"


def timed(argv: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, user+sys CPU of the child and its descendants) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def overhead(suite: str, repeat: int, data_dir: Path) -> dict[str, tuple[float, float]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    pytest = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", suite]
    variants = {
        "none": [PY, *pytest],
        "coverage": [PY, "-m", "ci_shards.coverage.launch", *pytest],
        "coverage + map": [PY, "-m", "ci_shards.coverage.launch", *pytest[:2], "-p", "ci_shards.coverage.pytest_map",
                           *pytest[2:]],
    }  # fmt: skip
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, argv in variants.items():
            if data_dir.exists():
                shutil.rmtree(data_dir)
            data_dir.mkdir(parents=True)
            results[name].append(timed(argv, cwd=REPO, env={**env, "CI_SHARDS_COVERAGE_DIR": str(data_dir)}))
    return {n: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for n, r in results.items()}


def split_into_shards(data_dir: Path, shards: int, root: Path) -> None:
    """``shards`` shard folders under ``root/shards`` from the measured data, and the plan."""
    measured = CoverageData(no_disk=True)
    for path in sorted(data_dir.glob(f"{DATA_STEM}*")):
        one = CoverageData(basename=str(path))
        one.read()
        measured.update(one)
    plan = Plan(
        total=shards,
        granularity=Granularity.FILE,
        shards=tuple(ShardPlan(index=i, items=(f"t{i}.py",), estimated_seconds=1.0) for i in range(1, shards + 1)),
        lower_bound_seconds=1.0,
        unknown_items=0,
    )
    (root / "plan.json").write_text(plan.dumps(), encoding="utf-8")
    per_shard = [CoverageData(basename=str(root / f"data-{i}"), no_disk=True) for i in range(shards)]
    arcs = measured.has_arcs()
    for name in measured.measured_files():
        for context in sorted(measured.measured_contexts()):
            measured.set_query_contexts([context])
            lines = measured.lines(name) or []
            if not lines:
                continue
            targets = range(shards) if not context else [int(hashlib.sha256(context.encode()).hexdigest(), 16) % shards]
            for k in targets:
                per_shard[k].set_context(context)
                if arcs:
                    per_shard[k].add_arcs({name: measured.arcs(name) or []})
                else:
                    per_shard[k].add_lines({name: lines})
    measured.set_query_contexts(None)
    for k, data in enumerate(per_shard, 1):
        folder = root / "shards" / f"shard-{k}-of-{shards}"
        (folder / "coverage").mkdir(parents=True)
        out = CoverageData(basename=str(folder / "coverage" / f"{DATA_STEM}.bench.{k}"))
        out.update(data)
        out.write()
        entry = {"tool": "coverage.py", "version": "", "source_root": str(REPO), "data": "coverage",
                 "files": [f"{DATA_STEM}.bench.{k}"], "map": True, "problem": ""}  # fmt: skip
        outcome = Outcome(plan_digest=plan.digest, shard_index=k, shard_total=shards, status=ShardStatus.PASSED,
                          coverage=entry)  # fmt: skip
        (folder / "outcome.json").write_text(outcome.dumps(), encoding="utf-8")


OURS = """
import sys
from pathlib import Path
from ci_shards.coverage.publish import publish
from ci_shards.model.planfile import load_plan
root = Path(sys.argv[1])
publish(load_plan(root / "plan.json"), [root / "shards"], out=root / "ours", root=Path.cwd(), fail_under=None,
        base=None, env={})
"""


def fold(root: Path, repeat: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    ref = root / "reference"
    rc = root / "rc"
    rc.write_text(RC, encoding="utf-8")
    times: dict[str, list[float]] = {"ours": [], "reference": []}
    for _ in range(repeat):
        times["ours"].append(timed([PY, "-c", OURS, str(root)], cwd=REPO, env=env)[0])
        if ref.exists():
            shutil.rmtree(ref)
        ref.mkdir()
        for path in (root / "shards").glob(f"*/coverage/{DATA_STEM}*"):
            shutil.copy(path, ref / path.name)
        data = str(ref / DATA_STEM)
        combine = [PY, "-m", "coverage", "combine", "--keep", "-q", f"--rcfile={rc}", f"--data-file={data}", str(ref)]
        xml = [
            PY,
            "-m",
            "coverage",
            "xml",
            "-q",
            "-i",
            f"--rcfile={rc}",
            f"--data-file={data}",
            "-o",
            str(root / "ref.xml"),
        ]
        times["reference"].append(timed(combine, cwd=REPO, env=env)[0] + timed(xml, cwd=REPO, env=env)[0])
    return {n: statistics.median(t) for n, t in times.items()}


def equivalent(root: Path) -> str:
    """Our folded lines vs coverage.py's own report of the same combined data, per file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    data = str(root / "reference" / DATA_STEM)
    out = root / "ref.json"
    subprocess.run(
        [PY, "-m", "coverage", "json", "-q", "-i", f"--rcfile={root / 'rc'}", f"--data-file={data}", "-o", str(out)],
        cwd=REPO, env=env, check=False, capture_output=True,
    )  # fmt: skip
    theirs = {
        name: (f["executed_lines"], f["missing_lines"])
        for name, f in json.loads(out.read_text(encoding="utf-8"))["files"].items()
        if not os.path.isabs(name)
    }
    folded = json.loads((root / "ours" / "coverage.json").read_text(encoding="utf-8"))["files"]
    ours = {name: (f["executed_lines"], f["missed_lines"]) for name, f in folded.items()}
    differ = sorted(n for n in set(ours) | set(theirs) if ours.get(n) != theirs.get(n))
    return f"{len(ours)} files, identical" if not differ else f"{len(differ)} files differ: {', '.join(differ[:5])}"


def shards_vs_serial(project: Path, shards: int) -> str:
    """``ci-shards local --coverage`` in ``shards`` shards vs one serial ``coverage run -m pytest``, per file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COVERAGE_", "GITHUB_"))}
    with tempfile.TemporaryDirectory(prefix="ci-shards-bench-eq-") as tmp:
        res, data, out = Path(tmp) / "res", Path(tmp) / "serial", Path(tmp) / "serial.json"
        local = [PY, "-m", "ci_shards", "local", "--pytest", "--shards", str(shards), "--granularity", "test",
                 "--coverage", "--out", str(res)]  # fmt: skip
        t0 = time.perf_counter()
        subprocess.run(local, cwd=project, env=env, check=False, capture_output=True)
        sharded_seconds = time.perf_counter() - t0
        pytest = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:ci_shards"]
        for args in (["run", f"--data-file={data}", *pytest], ["json", "-i", f"--data-file={data}", "-o", str(out)]):
            subprocess.run([PY, "-m", "coverage", *args], cwd=project, env=env, check=False, capture_output=True)
        serial = {n: (f["executed_lines"], f["missing_lines"]) for n, f in json.loads(out.read_text())["files"].items()}
        folded = json.loads((res / "coverage.json").read_text(encoding="utf-8"))
    ours = {n: (f["executed_lines"], f["missed_lines"]) for n, f in folded["files"].items()}
    serial = {n: v for n, v in serial.items() if not os.path.isabs(n)}
    differ = sorted(n for n in set(ours) | set(serial) if ours.get(n) != serial.get(n))
    verdict = f"{len(ours)} files identical" if not differ else f"{len(differ)} files differ: {', '.join(differ[:5])}"
    return f"{folded['label']}, {verdict} (sharded run {sharded_seconds:.1f} s)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--suite", default="tests/unit", help="pytest path, relative to the repository (default: tests/unit)"
    )
    parser.add_argument("--repeat", type=int, default=2, help="runs per variant, median shown (default: 2)")
    parser.add_argument("--shards", type=int, default=64, help="shard folders for the fold (default: 64)")
    parser.add_argument(
        "--workdir", type=Path, help="keep the data here; when it already holds shards, only fold (default: a temp dir)"
    )
    parser.add_argument(
        "--equivalence",
        type=Path,
        metavar="PROJECT",
        help="only compare `ci-shards local --coverage` in 4 shards with a serial coverage run in PROJECT",
    )
    args = parser.parse_args()
    if args.equivalence:
        print(f"{args.equivalence}: {shards_vs_serial(args.equivalence.resolve(), 4)}")
        return 0
    started = datetime.now(timezone.utc)
    with tempfile.TemporaryDirectory(prefix="ci-shards-bench-cov-") as tmp:
        root = args.workdir or Path(tmp)
        data_dir = root / "data"
        costs: dict[str, tuple[float, float]] = {}
        if not (root / "shards").is_dir():
            costs = overhead(args.suite, args.repeat, data_dir)  # the last variant (map) leaves its data
            split_into_shards(data_dir, args.shards, root)
        folds = fold(root, args.repeat)
        same = equivalent(root)
    print(f"Run {started:%Y-%m-%d %H:%M} UTC on `{' '.join(platform.uname())}`, nproc {os.cpu_count()}, "
          f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}.\n")  # fmt: skip
    if costs:
        base_wall, base_cpu = costs["none"]
        print(f"Suite: `{args.suite}` (median of {args.repeat}).\n")
        print("| variant | wall | CPU | wall vs none | CPU vs none |\n|---|--:|--:|--:|--:|")
        for name, (wall, cpu) in costs.items():
            print(f"| {name} | {wall:.1f} s | {cpu:.1f} s | {wall / base_wall:.2f}x | {cpu / base_cpu:.2f}x |")
    ratio = folds["ours"] / folds["reference"]
    print(f"\nFold of {args.shards} shards (median of {args.repeat}):\n")
    print("| method | wall |\n|---|--:|")
    print(f"| ours: fold + coverage.json + coverage.xml + lcov.info | {folds['ours']:.2f} s |")
    print(f"| reference: `coverage combine --keep && coverage xml` | {folds['reference']:.2f} s |")
    print(f"| ratio ours / reference (target ≤ 1.2) | {ratio:.2f} |")
    print(f"\nLine for line, ours' coverage.json vs `coverage json` of the reference's combined data: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
