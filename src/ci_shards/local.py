"""``ci-shards local``: plan, run every shard on this machine as parallel processes, aggregate.

Each shard is a real ``ci-shards run`` child process (its own session, its own subreaper), so a
local run exercises exactly what CI runs. This process is the subreaper of all of them: a second
Ctrl-C kills every tree, including ones whose ``run`` parent is already gone.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ci_shards.console import Console, fmt_seconds
from ci_shards.model import Plan, shard_dir_name
from ci_shards.process import CancelToken, become_subreaper, kill_tree


def available_memory(proc: Path = Path("/proc"), cgroup_root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """Bytes of memory available: MemAvailable, capped by this cgroup's v2 ``memory.max`` headroom."""
    available: int | None = None
    with contextlib.suppress(OSError, ValueError):
        for line in (proc / "meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
    with contextlib.suppress(OSError, ValueError):
        # cgroup v2: a single "0::/path" line (kernel docs, admin-guide/cgroup-v2.rst "memory.max")
        rel = next(line[3:] for line in (proc / "self" / "cgroup").read_text().splitlines() if line.startswith("0::"))
        group = cgroup_root / rel.lstrip("/")
        limit = (group / "memory.max").read_text().strip()
        if limit != "max":
            headroom = int(limit) - int((group / "memory.current").read_text().strip())
            available = headroom if available is None else min(available, headroom)
    return available


def auto_jobs(shards: int, *, cores: int, memory: int | None, job_memory: int) -> int:
    """min(cores, memory / per-job budget, shards), at least 1."""
    by_memory = max(1, memory // job_memory) if memory is not None else cores
    return max(1, min(cores, by_memory, shards))


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def run_argv(args: argparse.Namespace, plan_path: Path, index: int, total: int, command: Sequence[str]) -> list[str]:
    argv = [sys.executable, "-m", "ci_shards", "run", "--plan", str(plan_path), "--shard", f"{index}/{total}"]
    argv += ["--out", str(args.out), "--no-live", "--grace", f"{args.grace}", "--signal", str(args.graceful_signal)]
    argv += ["--retries", str(args.retries), "--max-rerun-failures", str(args.max_rerun_failures)]
    argv += ["--flaky-result", args.flaky_result, "--leak-timeout", f"{args.leak_timeout}"]
    if args.timeout is not None:
        argv += ["--timeout", f"{args.timeout}"]
    if args.max_test_seconds is not None:
        argv += ["--max-test-seconds", f"{args.max_test_seconds}"]
    if args.junit:
        argv += ["--junit", args.junit]
    if args.accept_exit_code:
        argv.append("--accept-exit-code")
    if args.pytest:
        argv.append("--pytest")
    if args.allow_empty:
        argv.append("--allow-empty")
    if args.coverage is not None:
        argv.append("--coverage" if args.coverage else "--no-coverage")
    if not args.coverage_map:
        argv.append("--no-coverage-map")
    return [*argv, "--", *command]


@dataclass
class _Job:
    index: int
    proc: subprocess.Popen[bytes]
    started: float
    log: IO[bytes]


def fmt_eta(seconds: float) -> str:
    """An ETA; past the plan's estimate a running shard is 'overdue' rather than '0.0 s'."""
    return fmt_seconds(seconds) if seconds >= 0.05 else "overdue (past the estimates)"


def run_local(
    *, plan: Plan, plan_path: Path, jobs: int, argv_for: Any, out: Path, console: Console, cancel: CancelToken
) -> list[int]:
    """Run every shard with at most ``jobs`` at once; returns the indexes that were never started."""
    become_subreaper()
    queue = [s.index for s in plan.shards]
    estimates = {s.index: s.estimated_seconds for s in plan.shards}
    running: dict[int, _Job] = {}
    done = 0
    t0 = time.monotonic()
    tty = console.stream.isatty()

    def say(text: str) -> None:  # an event line; on a terminal it first erases the live status line
        if tty:
            console.stream.write("\r\x1b[2K")
        console.line(text)

    forwarded = 0
    status_at = 0.0
    while queue or running:
        while queue and len(running) < jobs and not cancel.cancelled:
            index = queue.pop(0)
            shard_dir = out / shard_dir_name(index, plan.total)
            shard_dir.mkdir(parents=True, exist_ok=True)
            log = (shard_dir / "console.log").open("wb")
            proc = subprocess.Popen(
                argv_for(index), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            running[index] = _Job(index, proc, time.monotonic(), log)
            say(f"shard {index}/{plan.total} started (estimated {fmt_seconds(estimates[index])})")
        if len(cancel.signals) > forwarded:
            if forwarded == 0:
                say(f"interrupted: stopping {len(running)} running shard(s); Ctrl-C again to kill them")
                for job in running.values():
                    with contextlib.suppress(ProcessLookupError):
                        job.proc.send_signal(signal.SIGINT)
            else:
                kill_tree(os.getpid(), None)
            forwarded = len(cancel.signals)
        for index, job in list(running.items()):
            if job.proc.poll() is None:
                continue
            job.log.close()
            del running[index]
            done += 1
            status = _status_of(out / shard_dir_name(index, plan.total))
            now = time.monotonic()
            eta = _eta(now, running, queue, estimates, jobs)
            say(
                f"[{done}/{plan.total}] shard {index}/{plan.total} {status} in {fmt_seconds(now - job.started)}"
                + (f", ETA {fmt_eta(eta)}" if queue or running else f", all done in {fmt_seconds(now - t0)}")
            )
        if tty and running and time.monotonic() - status_at >= 0.5:
            status_at = time.monotonic()
            eta = _eta(status_at, running, queue, estimates, jobs)
            names = " ".join(str(i) for i in running)
            console.stream.write(f"\r  running: {names} | queued: {len(queue)} | ETA {fmt_eta(eta)}   \r")
            console.stream.flush()
        if cancel.cancelled and not running:
            break
        time.sleep(0.05)
    if tty:
        console.stream.write("\r\x1b[2K")
    return queue


def _eta(
    now: float, running: Mapping[int, _Job], queue: Sequence[int], estimates: Mapping[int, float], jobs: int
) -> float:
    left = [max(0.0, estimates[i] - (now - j.started)) for i, j in running.items()]
    pending = sum(estimates[i] for i in queue)
    return max(max(left, default=0.0), (sum(left) + pending) / max(1, jobs))


def _status_of(shard_dir: Path) -> str:
    try:
        return str(json.loads((shard_dir / "outcome.json").read_text(encoding="utf-8"))["status"])
    except (OSError, ValueError, KeyError):
        return "never-started (no outcome.json)"


def aggregate_results(plan: Plan, out: Path, *, flaky_result: str, allow_empty: bool = False) -> tuple[str, int]:
    """The aggregate stage's verdict over the shard folders: terminal table and exit code."""
    from ci_shards.aggregate import FlakyResult, aggregate_dirs  # noqa: PLC0415
    from ci_shards.report import render_terminal  # noqa: PLC0415

    # only the folders that exist: a shard Ctrl-C kept from starting has none, and is then
    # "never-started" in the verdict rather than an unreadable input that hides the whole table
    dirs = [d for d in (out / shard_dir_name(s.index, plan.total) for s in plan.shards) if d.is_dir()]
    verdict = aggregate_dirs(plan, dirs, flaky_result=FlakyResult(flaky_result), allow_empty=allow_empty)
    return render_terminal(verdict), verdict.exit_code
