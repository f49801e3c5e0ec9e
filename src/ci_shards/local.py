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

from ci_shards.console import Console, console_for
from ci_shards.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, UsageError
from ci_shards.model import Outcome, Plan, ShardStatus, shard_dir_name
from ci_shards.process import CancelToken, become_subreaper, kill_tree
from ci_shards.runner import cancel_on_signals

DEFAULT_JOB_MEMORY = 1 << 30


def parse_size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    raw = text.strip().lower().rstrip("ib").rstrip("b")
    try:
        if raw and raw[-1] in units:
            return int(float(raw[:-1]) * units[raw[-1]])
        return int(raw)
    except ValueError:
        msg = f"{text!r} is not a size (e.g. 512M, 2G)"
        raise argparse.ArgumentTypeError(msg) from None


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


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _run_argv(args: argparse.Namespace, plan_path: Path, index: int, total: int, command: Sequence[str]) -> list[str]:
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
    return [*argv, "--", *command]


@dataclass
class _Job:
    index: int
    proc: subprocess.Popen[bytes]
    started: float
    log: IO[bytes]


def _fmt(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


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
    forwarded = 0
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
            console.line(f"shard {index}/{plan.total} started (estimated {_fmt(estimates[index])})")
        if len(cancel.signals) > forwarded:
            if forwarded == 0:
                console.line(f"interrupted: stopping {len(running)} running shard(s); Ctrl-C again to kill them")
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
            console.line(
                f"[{done}/{plan.total}] shard {index}/{plan.total} {status} in {_fmt(now - job.started)}"
                + (f", ETA {_fmt(eta)}" if queue or running else f", all done in {_fmt(now - t0)}")
            )
        if tty and running:
            eta = _eta(time.monotonic(), running, queue, estimates, jobs)
            names = " ".join(str(i) for i in running)
            console.stream.write(f"\r  running: {names} | queued: {len(queue)} | ETA {_fmt(eta)}   \r")
            console.stream.flush()
        if cancel.cancelled and not running:
            break
        time.sleep(0.05)
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


def plain_table(plan: Plan, out: Path) -> tuple[str, bool]:
    """A verdict table from the shard folders (used when the aggregate stage is not installed)."""
    rows = ["shard   status          tests  failed  flaky  not-run  seconds  reason"]
    ok = True
    for shard in plan.shards:
        folder = out / shard_dir_name(shard.index, plan.total)
        try:
            outcome = Outcome.from_json(json.loads((folder / "outcome.json").read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError):
            rows.append(f"{shard.index}/{plan.total:<5} {'never-started':<15} {'-':>5}  no outcome.json in {folder}")
            ok = False
            continue
        if outcome.plan_digest != plan.digest:
            outcome_status = ShardStatus.ERROR
            reason = "outcome.json is from another plan"
        else:
            outcome_status, reason = outcome.status, outcome.reason
        ok = ok and outcome_status.is_success
        rows.append(
            f"{shard.index}/{plan.total:<5} {outcome_status.value:<15} {outcome.executed_tests:>5}  "
            f"{outcome.failed + outcome.errors:>6}  {len(outcome.flaky_tests):>5}  {len(outcome.not_run):>7}  "
            f"{outcome.elapsed_seconds:>7.1f}  {reason[:100]}"
        )
    rows.append(f"verdict: {'PASSED' if ok else 'FAILED'}")
    return "\n".join(rows) + "\n", ok


def _aggregate(plan: Plan, out: Path) -> tuple[str, int]:
    try:
        from ci_shards.aggregate import aggregate_dirs  # type: ignore[attr-defined,import-not-found,unused-ignore]  # noqa: PLC0415
        from ci_shards.report import render_terminal  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415
    except ImportError:
        text, ok = plain_table(plan, out)
        return text, EXIT_OK if ok else EXIT_FAILED
    dirs = [out / shard_dir_name(s.index, plan.total) for s in plan.shards]
    verdict = aggregate_dirs(plan, dirs)
    return str(render_terminal(verdict)), int(verdict.exit_code)


def make_plan(args: argparse.Namespace, *, env: Mapping[str, str], cwd: Path, pytest_args: list[str] | None) -> Plan:
    try:
        from ci_shards.commands.plan import plan_from_options  # type: ignore[attr-defined,import-not-found,unused-ignore]  # noqa: PLC0415
    except ImportError:
        from ci_shards.local_plan import fallback_plan  # noqa: PLC0415

        return fallback_plan(args, cwd=cwd, pytest_args=pytest_args)
    return plan_from_options(args, env=env, cwd=cwd, pytest_args=pytest_args)  # type: ignore[no-any-return]


def _local_handler(args: argparse.Namespace) -> int:
    from ci_shards.commands.run import command_args, pytest_extra_args  # noqa: PLC0415

    env = dict(os.environ)
    cwd = Path.cwd()
    console = console_for(env)
    raw = command_args(args.command)
    if not args.pytest and not raw:
        msg = "no command given: add `-- CMD ARGS... {items}` or use --pytest"
        raise UsageError(msg)
    plan = make_plan(args, env=env, cwd=cwd, pytest_args=raw if args.pytest else None)
    args.out.mkdir(parents=True, exist_ok=True)
    plan_path = args.out / "plan.json"
    plan_path.write_text(plan.dumps(), encoding="utf-8")
    command = pytest_extra_args(raw, cwd) if args.pytest else raw
    if args.jobs == "auto":
        jobs = auto_jobs(plan.total, cores=_cores(), memory=available_memory(), job_memory=args.job_memory)
    elif args.jobs.isdigit() and int(args.jobs) > 0:
        jobs = min(int(args.jobs), plan.total)
    else:
        msg = f"--jobs {args.jobs!r}: expected auto or a positive number"
        raise UsageError(msg)
    console.line(
        f"ci-shards local: {len(plan.items)} items in {plan.total} shards, {jobs} at a time, "
        f"estimated {_fmt(plan.estimated_makespan)} per shard at most; results in {args.out}"
    )
    cancel = CancelToken()
    with cancel_on_signals(cancel):
        never = run_local(
            plan=plan,
            plan_path=plan_path,
            jobs=jobs,
            argv_for=lambda i: _run_argv(args, plan_path, i, plan.total, command),
            out=args.out,
            console=console,
            cancel=cancel,
        )
    if never:
        console.warning(f"never started (interrupted): shards {', '.join(map(str, never))}")
    text, code = _aggregate(plan, args.out)
    sys.stdout.write(text)
    sys.stdout.flush()
    return EXIT_INTERRUPTED if cancel.cancelled else code


def register_local(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from ci_shards.commands.run import add_execution_options  # noqa: PLC0415

    local = subparsers.add_parser(
        "local",
        help="plan, run every shard here as parallel processes, and print the verdict",
        description="Plan the suite, run every shard on this machine (each a real `ci-shards run`), then aggregate. "
        "Ctrl-C stops every shard and still reports what finished; a second Ctrl-C kills them.",
    )
    try:
        from ci_shards.commands.plan import add_plan_options  # type: ignore[attr-defined,import-not-found,unused-ignore]  # noqa: PLC0415
    except ImportError:
        from ci_shards.local_plan import add_fallback_plan_options as add_plan_options  # noqa: PLC0415
    add_plan_options(local)
    local.add_argument(
        "--jobs",
        default="auto",
        help="shards at once: N or auto = min(cores, memory/--job-memory, shards) (default: auto)",
    )
    local.add_argument(
        "--job-memory",
        type=parse_size,
        default=DEFAULT_JOB_MEMORY,
        help="memory budget per job for --jobs auto (default: 1G)",
    )
    add_execution_options(local, pytest_flag=False)
    local.set_defaults(handler=_local_handler)
