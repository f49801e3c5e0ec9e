"""What a ``ci-shards`` process costs before it does its work: real subcommands on a one-test project, CPU and wall.

The suite starts ~550 ``ci-shards`` processes and a workflow one per step, so the CLI's start-up is paid often
(docs/benchmarks.md, "Start-up per command"). Each command runs ``--repeat`` times in a row for each source tree,
the trees alternating, and the median is reported: "after" is the installed ci_shards, "before" a checkout's
``src`` given by ``--before`` (put first on ``PYTHONPATH``, e.g. from ``git archive``).

    python benchmarks/startup.py --before /tmp/before/src --repeat 15
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

COMMANDS: dict[str, list[str]] = {
    "--version": ["--version"],
    "plan": ["plan", "--items", "items.txt", "--shards", "1", "-o", "plan.json"],
    "run": ["run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--", sys.executable, "-c", "pass"],
    "aggregate": ["aggregate", "--plan", "plan.json", "out"],
    "junit summary": ["junit", "summary", "j.xml"],
}
JUNIT = '<testsuite><testcase classname="t" name="a" time="0.1"/></testsuite>\n'


def _one(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one ``python -m ci_shards ARGV``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ci_shards", *argv], cwd=cwd, env=dict(env), capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _project(folder: Path, env: Mapping[str, str]) -> None:
    (folder / "items.txt").write_text("test_a.py::test_a\n", encoding="utf-8")
    (folder / "j.xml").write_text(JUNIT, encoding="utf-8")
    for name in ("plan", "run"):  # the plan and the shard folder the later commands read
        _one(COMMANDS[name], folder, env)


def measure(trees: Mapping[str, Mapping[str, str]], repeat: int, rounds: int) -> dict[str, dict[str, list[float]]]:
    """``tree -> command -> CPU seconds`` of every run (walls beside them under ``command + " wall"``)."""
    found: dict[str, dict[str, list[float]]] = {tree: {} for tree in trees}
    with tempfile.TemporaryDirectory() as tmp:
        for tree, env in trees.items():
            (Path(tmp) / tree).mkdir()
            _project(Path(tmp) / tree, env)
        for _round in range(rounds):
            for tree, env in trees.items():
                for name, argv in COMMANDS.items():
                    for _ in range(repeat):
                        wall, cpu = _one(argv, Path(tmp) / tree, env)
                        found[tree].setdefault(name, []).append(cpu)
                        found[tree].setdefault(f"{name} wall", []).append(wall)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout's src folder to compare with (on PYTHONPATH)")
    parser.add_argument("--repeat", type=int, default=10, help="runs of each command per round (default 10)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, the trees alternating (default 2)")
    args = parser.parse_args(argv)
    # bytecode written and read, as on a user's machine: without it every run compiles the "before" tree again
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    trees: dict[str, Mapping[str, str]] = {"after": base}
    if args.before is not None:
        trees = {"before": {**base, "PYTHONPATH": str(args.before.resolve())}, **trees}
    found = measure(trees, args.repeat, args.rounds)
    print("| command | " + " | ".join(f"{tree}: CPU / wall ms (median)" for tree in trees) + " |")
    print("|---|" + "--:|" * len(trees))
    for name in COMMANDS:
        cells = [
            f"{statistics.median(found[t][name]) * 1000:.0f} / {statistics.median(found[t][f'{name} wall']) * 1000:.0f}"
            for t in trees
        ]
        print(f"| `{name}` | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
