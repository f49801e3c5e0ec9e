"""End-to-end sharding benchmark on a real suite from PyPI (by hand; results in docs/benchmarks.md "Runner").

    python benchmarks/e2e.py [--venv /tmp/ci-shards-pint] [--shards 4] [--repeat 1] [--suite pyargs]

Installs pint (with numpy and its test plugins), pytest-split and this checkout into a throwaway
venv, records the suite's durations with one serial run (pytest-split ``--store-durations``), then
runs each of the N shards as its own process, one after another, alternating the two tools:

- ci-shards: ``plan`` (the planner ``ci-shards local`` uses) once, then ``ci-shards run --pytest``
  per shard (only the shard's own files are collected);
- pytest-split: ``pytest --splits N --group i`` on the same durations (every shard collects all).

``--suite testsuite`` (default) runs ``pint/testsuite`` from site-packages. ``--suite pyargs`` runs
``--pyargs pint`` from a repository root: a folder holding a copy of the package (tests inside it),
as a checkout is, with every command started there and ``--pyargs pint`` also in each shard's
arguments (the natural thing to type; ``ci-shards run`` drops it and runs the shard's files).

Reports, per tool: slowest shard / max(serial / N, longest test) (target <= 1.15) and the sum of
shard walls / serial (target <= 1.10), plus how many tests each tool ran in total.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ["pint", "numpy", "pytest", "pytest-split", "pytest-benchmark", "pytest-subtests"]
# --rootdir: pytest otherwise derives it from every path-like argument, --durations-path included,
# and node ids (pytest-split's keys) would change with where the durations file lives
PYTEST_OPTS = ["-p", "no:cacheprovider", "--benchmark-skip", "--rootdir=.", "-q"]
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "GITHUB_ACTIONS")}

PLAN_SNIPPET = """
import json, os, sys
from pathlib import Path
from ci_shards.cli import build_parser
from ci_shards.commands.plan import plan_from_options
argv = ["local", "--shards", sys.argv[1], "--durations", sys.argv[2], "--pytest", "--", *sys.argv[4:]]
args = build_parser().parse_args(argv)
plan = plan_from_options(args, env=dict(os.environ), cwd=Path.cwd(), pytest_args=sys.argv[4:])
Path(sys.argv[3]).write_text(plan.dumps())
"""


CPU: list[float] = [0.0]  # CPU seconds (user + sys) of the last sh() call's process tree


def sh(argv: list[str], cwd: Path | None = None, quiet: bool = True) -> float:
    """Wall seconds of one command; its tree's CPU seconds go to CPU[0] (robust to a loaded machine)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.DEVNULL if quiet else None
    subprocess.run(argv, cwd=cwd, stdout=out, stderr=out, check=False, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[0] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall


def ensure_venv(venv: Path) -> tuple[Path, Path]:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PACKAGES], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(REPO)], check=True)
    site = Path(
        subprocess.run(
            [str(python), "-c", "import pint, pathlib; print(pathlib.Path(pint.__file__).parent.parent)"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    return python, site


def suite_folder(suite: str, site: Path, work: Path) -> tuple[Path, list[str]]:
    """Where every command runs and the pytest arguments that select the suite."""
    if suite == "testsuite":
        return site, ["pint/testsuite"]
    repo = work / "repo"
    if not (repo / "pint").is_dir():
        shutil.copytree(site / "pint", repo / "pint", ignore=shutil.ignore_patterns("__pycache__"))
    return repo, ["--pyargs", "pint"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=Path("/tmp/ci-shards-pint"), help="(default: /tmp/ci-shards-pint)")
    parser.add_argument("--shards", type=int, default=4, help="(default: 4)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of both tools (default: 1)")
    parser.add_argument(
        "--suite", choices=["testsuite", "pyargs"], default="testsuite", help="how pint is run (default: testsuite)"
    )
    args = parser.parse_args()
    python, site = ensure_venv(args.venv)
    work = args.venv / "bench"
    work.mkdir(exist_ok=True)
    cwd, target = suite_folder(args.suite, site, work)
    durations = work / "durations.json"
    durations.unlink(missing_ok=True)
    serial_cmd = [str(python), "-m", "pytest", *target, *PYTEST_OPTS]
    serials = [sh([*serial_cmd, "--store-durations", "--durations-path", str(durations)], cwd=cwd)]
    serial_cpus = [CPU[0]]
    times = json.loads(durations.read_text())
    longest = max(times.values())
    plan_path = work / "plan.json"
    plan_seconds = sh(
        [
            str(python),
            "-c",
            PLAN_SNIPPET,
            str(args.shards),
            str(durations),
            str(plan_path),
            *target,
            *PYTEST_OPTS[:-1],
        ],
        cwd=cwd,
        quiet=False,
    )
    keys = ("slowest", "sum", "cpu_slowest", "cpu_sum")
    ratios: dict[str, dict[str, list[float]]] = {t: {k: [] for k in keys} for t in ("ci-shards", "pytest-split")}
    tests_run: dict[str, int] = {"ci-shards": 0, "pytest-split": 0}
    last: dict[str, list[float]] = {}
    for round_no in range(args.repeat):
        if round_no:  # a serial reference in every round: this machine's load drifts
            serials.append(sh(serial_cmd, cwd=cwd))
            serial_cpus.append(CPU[0])
        serial, serial_cpu = serials[-1], serial_cpus[-1]
        ideal = max(serial / args.shards, longest)
        round_walls: dict[str, list[float]] = {"ci-shards": [], "pytest-split": []}
        round_cpus: dict[str, list[float]] = {"ci-shards": [], "pytest-split": []}
        for index in range(1, args.shards + 1):
            out = work / "out"
            round_walls["ci-shards"].append(
                sh(
                    [
                        str(python),
                        "-m",
                        "ci_shards",
                        "run",
                        "--plan",
                        str(plan_path),
                        "--shard",
                        f"{index}/{args.shards}",
                        "--out",
                        str(out),
                        "--pytest",
                        "--",
                        *(target if args.suite == "pyargs" else []),
                        *PYTEST_OPTS[:-1],
                    ],
                    cwd=cwd,
                )
            )
            round_cpus["ci-shards"].append(CPU[0])
            outcome = json.loads((out / f"shard-{index}-of-{args.shards}" / "outcome.json").read_text())
            tests_run["ci-shards"] += outcome["executed_tests"] + outcome["skipped"]
            junit = work / f"split-{index}.xml"
            round_walls["pytest-split"].append(
                sh(
                    [
                        str(python),
                        "-m",
                        "pytest",
                        *target,
                        *PYTEST_OPTS,
                        "--splits",
                        str(args.shards),
                        "--group",
                        str(index),
                        "--durations-path",
                        str(durations),
                        f"--junitxml={junit}",
                    ],
                    cwd=cwd,
                )
            )
            round_cpus["pytest-split"].append(CPU[0])
            tests_run["pytest-split"] += junit.read_text().count("<testcase ")
        for tool, values in round_walls.items():
            ratios[tool]["slowest"].append(max(values) / ideal)
            ratios[tool]["sum"].append(sum(values) / serial)
            cpus = round_cpus[tool]
            ratios[tool]["cpu_slowest"].append(max(cpus) / max(serial_cpu / args.shards, longest))
            ratios[tool]["cpu_sum"].append(sum(cpus) / serial_cpu)
        last = round_walls
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus, {platform.platform()}, "
        f"Python {platform.python_version()}",
        "suite": f"pint from PyPI ({' '.join(target)} in {cwd.name}), {len(times)} tests, longest {longest:.2f} s",
        "serial_s_per_round": [round(v, 1) for v in serials],
        "serial_cpu_s_per_round": [round(v, 1) for v in serial_cpus],
        "plan_seconds": round(plan_seconds, 2),
        "shards": args.shards,
        "repeat": args.repeat,
    }
    for tool, values in ratios.items():
        result[tool] = {
            "shard_walls_last_round_s": [round(w, 2) for w in last[tool]],
            "slowest_over_ideal_per_round": [round(v, 3) for v in values["slowest"]],
            "sum_over_serial_per_round": [round(v, 3) for v in values["sum"]],
            "slowest_over_ideal_median": round(statistics.median(values["slowest"]), 3),
            "sum_over_serial_median": round(statistics.median(values["sum"]), 3),
            "cpu_slowest_over_ideal_per_round": [round(v, 3) for v in values["cpu_slowest"]],
            "cpu_sum_over_serial_per_round": [round(v, 3) for v in values["cpu_sum"]],
            "tests_run_total": tests_run[tool] // args.repeat,
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
