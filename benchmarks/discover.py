"""The plan job's own work with --discover: a generated 10,000-test suite on disk plus its timings store.

Generates (in a temporary directory) a project with ``[tool.pytest.ini_options] testpaths`` and
``--files`` test files holding ``--tests`` tests in all, a ci-shards timings store with 5 samples
per test (as aggregate writes it) and a learned per-shard overhead, then deletes a few files and
adds a few new ones (so both merge paths are taken). It times the whole command the action's plan
step runs — a fresh ``python -m ci_shards matrix --discover --cached-durations ...`` process,
interpreter start-up included — ``--repeat`` times and prints the median and the best, for a fixed
shard count and for ``--shards auto``, and without the store (the first plan: every file's tests
counted with ``ast``). The target (issue 10) is ≤ 1 s for 10,000 tests.

Run by hand:  .venv/bin/python benchmarks/discover.py [--tests 10000] [--files 500] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ci_shards.timings.store import TimingsStore


def make_suite(root: Path, tests: int, files: int, rnd: random.Random) -> None:
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    per_file = [0] * files
    for _ in range(tests):
        per_file[rnd.randrange(files)] += 1
    samples: dict[str, list[float]] = {}
    for f, count in enumerate(per_file):
        if not count:
            continue
        path = root / "tests" / f"pkg{f % 20}" / f"test_mod{f}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"def test_{t}():\n    pass\n\n" for t in range(count)))
        for t in range(count):
            base = rnd.lognormvariate(-3, 1.5)
            samples[f"{path.relative_to(root).as_posix()}::test_{t}"] = [base * rnd.uniform(0.9, 1.1) for _ in range(5)]
    store = TimingsStore(variants={"": {k: tuple(v) for k, v in samples.items()}}, overhead={"": (4.0, 5.0, 4.5)})
    (root / ".ci-shards").mkdir()
    (root / ".ci-shards" / "timings.json").write_text(store.dumps())
    # five files deleted since the timings were taken, five new ones
    for f in range(5):
        for old in (root / "tests").glob(f"pkg{f}/test_mod{f}.py"):
            old.unlink()
        (root / "tests" / f"pkg{f}" / f"test_new{f}.py").write_text("def test_new():\n    pass\n")


def time_plan(root: Path, shards: list[str], repeat: int, *, timings: bool = True) -> list[float]:
    command = [sys.executable, "-m", "ci_shards", "matrix", "--discover", "--plan-out", "plan.json"]
    command += ["--cached-durations", ".ci-shards/timings.json", *shards] if timings else shards
    env = {k: v for k, v in os.environ.items() if k not in {"GITHUB_OUTPUT", "PYTHONDONTWRITEBYTECODE"}}
    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=root, env=env, check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
    return walls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_suite(root, args.tests, args.files, random.Random(20261130))
        print(
            f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on `{' '.join(platform.uname())}`,"
            f" nproc {os.cpu_count()}, Python {sys.version.split()[0]}, load {os.getloadavg()[0]:.1f}"
        )
        print(f"{args.tests:,} tests in {args.files} files (5 deleted, 5 new), a store with 5 samples per test")
        for label, shards, timings in (
            ("--shards 16", ["--shards", "16"], True),
            ("--shards auto --target-seconds 60", ["--shards", "auto", "--target-seconds", "60"], True),
            # the first plan: no store, every file read with ast to count its tests
            ("--shards 16", ["--shards", "16"], False),
        ):
            walls = time_plan(root, shards, args.repeat, timings=timings)
            plan = json.loads((root / "plan.json").read_text())
            given = "" if timings else " with no timings"
            print(
                f"- `ci-shards matrix --discover {label}`{given}: median {statistics.median(walls):.2f} s, best"
                f" {min(walls):.2f} s of {args.repeat} (whole process); {plan['total']} shards,"
                f" {sum(len(s['items']) for s in plan['shards']):,} items, {plan['unknown_items']} unknown"
            )
            for note in plan["notes"]:
                print(f"  - {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
