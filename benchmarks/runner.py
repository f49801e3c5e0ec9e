"""Run-stage benchmarks (by hand; results go into docs/benchmarks.md, "Runner" section).

    python benchmarks/runner.py [--repeat 5] [--spool-mb 1024]

1. overhead: ``ci-shards run`` around a trivial command vs the bare command (target < 0.15 s);
2. spool: 1 GB of output through ``ci-shards run`` vs ``cat > file`` (target >= 0.5x throughput),
   with ci-shards' peak RSS (VmHWM from /proc, target: flat);
3. deadline to a fully dead tree: a tree that ignores the graceful signal, grace 1 s
   (target <= grace + 0.5 s).

Each comparison runs both sides alternately in the same process, so machine noise hits both.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ci_shards.model.plan import Granularity, Plan, ShardPlan

CI_SHARDS = [sys.executable, "-m", "ci_shards"]
# a real install caches bytecode; without it every run recompiles ci-shards (~0.1 s of noise)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def write_plan(path: Path, items: list[str]) -> None:
    plan = Plan(
        total=1,
        granularity=Granularity.TEST,
        shards=(ShardPlan(index=1, items=tuple(items), estimated_seconds=1.0),),
        lower_bound_seconds=1.0,
        unknown_items=0,
    )
    path.write_text(plan.dumps())


def wall(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV)
    return time.perf_counter() - start


def peak_rss_mib(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB of the started process) — polls /proc/<pid>/status VmHWM."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    peak = 0
    while proc.poll() is None:
        try:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.01)
    return time.perf_counter() - start, peak / 1024


def overhead(work: Path, repeat: int) -> dict[str, float]:
    write_plan(work / "plan.json", ["t::a"])
    bare, wrapped = [], []
    run = [*CI_SHARDS, "run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--accept-exit-code", "--"]
    for _ in range(repeat):
        bare.append(wall(["true"], work))
        wrapped.append(wall([*run, "true", "{items}"], work))
    python_start = statistics.median(wall([sys.executable, "-c", "pass"], work) for _ in range(repeat))
    return {
        "bare_median_s": statistics.median(bare),
        "ci_shards_median_s": statistics.median(wrapped),
        "overhead_s": statistics.median(wrapped) - statistics.median(bare),
        "python_startup_s": python_start,
    }


def spool(work: Path, megabytes: int, repeat: int) -> dict[str, float]:
    write_plan(work / "plan.json", ["t::a"])
    producer = f"head -c {megabytes}M /dev/zero"
    cat_times, run_times, rss = [], [], []
    run = [*CI_SHARDS, "run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--accept-exit-code", "--"]
    for _ in range(repeat):
        cat_times.append(wall(["sh", "-c", f"{producer} | cat > {work / 'cat.out'}"], work))
        seconds, peak = peak_rss_mib([*run, "sh", "-c", producer], work)
        run_times.append(seconds)
        rss.append(peak)
        size = (work / "out" / "shard-1-of-1" / "output.log").stat().st_size
        assert size >= megabytes << 20, size
    small, _ = peak_rss_mib([*run, "true"], work)
    _, small_rss = peak_rss_mib([*run, "true"], work)
    best_cat, best_run = min(cat_times), min(run_times)
    return {
        "megabytes": megabytes,
        "cat_best_s": best_cat,
        "ci_shards_best_s": best_run,
        "cat_mb_per_s": megabytes / best_cat,
        "ci_shards_mb_per_s": megabytes / best_run,
        "throughput_ratio": best_cat / best_run,
        "ci_shards_peak_rss_mib": max(rss),
        "ci_shards_peak_rss_trivial_mib": small_rss,
        "trivial_run_s": small,
    }


STUBBORN = """
import signal, subprocess, sys, time
for s in (signal.SIGINT, signal.SIGTERM):
    signal.signal(s, signal.SIG_IGN)
code = "import os, signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); os.setsid(); time.sleep(600)"
for _ in range(3):
    subprocess.Popen([sys.executable, "-c", code])
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
time.sleep(600)
"""


def deadline(work: Path, repeat: int, grace: float) -> dict[str, float]:
    write_plan(work / "plan.json", ["t::a"])
    (work / "stubborn.py").write_text(STUBBORN)
    results = []
    for _ in range(repeat):
        argv = [
            *CI_SHARDS,
            "run",
            "--plan",
            "plan.json",
            "--shard",
            "1/1",
            "--out",
            "out",
            "--timeout",
            "1s",
            "--grace",
            f"{grace}s",
            "--accept-exit-code",
            "--",
            sys.executable,
            "stubborn.py",
        ]
        wall(argv, work)
        outcome = json.loads((work / "out" / "shard-1-of-1" / "outcome.json").read_text())
        assert outcome["status"] == "timed-out"
        results.append(outcome["attempts"][0]["deadline_to_dead_seconds"])
    return {"grace_s": grace, "deadline_to_dead_median_s": statistics.median(results), "max_s": max(results)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="repetitions per measurement (default: 5)")
    parser.add_argument("--spool-mb", type=int, default=1024, help="output size for the spool test (default: 1024)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ci-shards-bench-") as tmp:
        work = Path(tmp)
        report = {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{platform.machine()}, {os.cpu_count()} cpus, {platform.platform()}, "
            f"Python {platform.python_version()}",
            "overhead": overhead(work, args.repeat),
            "spool": spool(work, args.spool_mb, max(1, args.repeat // 2)),
            "deadline": deadline(work, max(1, args.repeat // 2), 1.0),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
