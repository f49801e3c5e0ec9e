"""``ci-shards local``: plan, run every shard on this machine as parallel processes, aggregate.

Each shard is a real ``ci-shards run`` child process (its own session, its own subreaper), so a
local run exercises exactly what CI runs. This process is the subreaper of all of them: a second
Ctrl-C kills every tree, including ones whose ``run`` parent is already gone.
"""

from __future__ import annotations

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

from ci_shards.common.console import Console, fmt_seconds, plural, strip_control
from ci_shards.model.outcome import shard_dir_name
from ci_shards.model.plan import Plan
from ci_shards.options.typed import ReportFiles
from ci_shards.report import outputs
from ci_shards.report.aggregate import FlakyResult, aggregate_dirs
from ci_shards.report.artifacts import LOG_FILE
from ci_shards.report.frames import failing_line, restore_first_indent
from ci_shards.report.groups import group_failures
from ci_shards.report.render import complete_in, failure_lines, render_summary, render_terminal
from ci_shards.report.verdict import Verdict
from ci_shards.run.process import CancelToken, become_subreaper, kill_tree
from ci_shards.run.settings import RunSettings


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


def run_argv(options: RunSettings, plan_path: Path, index: int, total: int, command: Sequence[str]) -> list[str]:
    """The ``ci-shards run`` of one shard: every run option of ``local`` passed on, coverage decided here once."""
    argv = [sys.executable, "-m", "ci_shards", "run", "--plan", str(plan_path), "--shard", f"{index}/{total}"]
    argv += ["--out", str(options.out), "--no-live", "--grace", f"{options.grace}"]
    argv += ["--signal", str(options.graceful_signal), "--retries", str(options.retries)]
    argv += ["--max-rerun-failures", str(options.max_rerun_failures)]
    argv += ["--flaky-result", options.flaky_result.value, "--leak-timeout", f"{options.leak_timeout}"]
    if options.timeout is not None:
        argv += ["--timeout", f"{options.timeout}"]
    if options.max_test_seconds is not None:
        argv += ["--max-test-seconds", f"{options.max_test_seconds}"]
    if options.junit:
        argv += ["--junit", options.junit]
    if options.accept_exit_code:
        argv.append("--accept-exit-code")
    if options.pytest:
        argv.append("--pytest")
    if options.python:
        argv += ["--python", options.python]
    if options.allow_empty:
        argv.append("--allow-empty")
    argv.append("--coverage" if options.coverage else "--no-coverage")
    if not options.coverage_map:
        argv.append("--no-coverage-map")
    return [*argv, "--", *command]


@dataclass
class _Job:
    index: int
    proc: subprocess.Popen[bytes]
    started: float
    log: IO[bytes]


@dataclass(frozen=True)
class Eta:
    """Time until every shard is done. ``open_ended``: a running shard is already past its (paced)
    estimate, so nobody knows its end: ``seconds`` is then only what is surely left."""

    seconds: float
    open_ended: bool = False


def fmt_eta(eta: Eta) -> str:
    """Never "overdue" or "0.0s" while work remains: past the estimates the ETA says so, with the
    time that is surely left (the queued shards) when there is any."""
    if not eta.open_ended:
        return fmt_seconds(eta.seconds) if eta.seconds >= 0.05 else "< 0.1s"
    if eta.seconds >= 0.05:
        return f"at least {fmt_seconds(eta.seconds)} (running past the estimates)"
    return "unknown (running past the estimates)"


def estimate_eta(
    now: float,
    started: Mapping[int, float],
    queue: Sequence[int],
    estimates: Mapping[int, float],
    *,
    jobs: int,
    finished: Sequence[tuple[float, float]] = (),
) -> Eta:
    """The ETA from the plan's estimates, paced by the shards that ``finished`` (estimated, actual
    seconds): a fresh plan (no timings: every item a default guess) is off by a common factor,
    which the first finished shards reveal. ``started``: running shard → its start time."""
    paced = [(e, a) for e, a in finished if e >= 0.1]  # a near-zero estimate says nothing about pace
    estimated = sum(e for e, _a in paced)
    pace = sum(a for _e, a in paced) / estimated if estimated > 0 else 1.0
    left = []
    open_ended = False
    for index, start in started.items():
        remaining = estimates[index] * pace - (now - start)
        if remaining <= 0 and pace < 1:
            # shards that finished early made the pace fast; one still within the plan's own estimate is
            # not "running past the estimates" (issue 27): that estimate is what is left
            remaining = estimates[index] - (now - start)
        open_ended |= remaining <= 0
        left.append(max(0.0, remaining))
    pending = sum(estimates[i] for i in queue) * pace
    return Eta(max(max(left, default=0.0), (sum(left) + pending) / max(1, jobs)), open_ended)


def run_local(
    *, plan: Plan, plan_path: Path, jobs: int, argv_for: Any, out: Path, console: Console, cancel: CancelToken
) -> list[int]:
    """Run every shard with at most ``jobs`` at once; returns the indexes that were never started."""
    become_subreaper()
    queue = [s.index for s in plan.shards]
    estimates = {s.index: s.estimated_seconds for s in plan.shards}
    running: dict[int, _Job] = {}
    finished: list[tuple[float, float]] = []  # (estimated, actual) seconds of each finished shard
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
                say(f"interrupted: stopping {plural(len(running), 'running shard')}; Ctrl-C again to kill them")
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
            finished.append((estimates[index], now - job.started))
            eta = estimate_eta(now, _starts(running), queue, estimates, jobs=jobs, finished=finished)
            say(
                f"[{done}/{plan.total}] shard {index}/{plan.total} {status} in {fmt_seconds(now - job.started)}"
                + (f", ETA {fmt_eta(eta)}" if queue or running else f", all done in {fmt_seconds(now - t0)}")
            )
        if tty and running and time.monotonic() - status_at >= 0.5:
            status_at = time.monotonic()
            eta = estimate_eta(status_at, _starts(running), queue, estimates, jobs=jobs, finished=finished)
            names = " ".join(str(i) for i in running)
            console.stream.write(f"\r  running: {names} | queued: {len(queue)} | ETA {fmt_eta(eta)}   \r")
            console.stream.flush()
        if cancel.cancelled and not running:
            break
        time.sleep(0.05)
    if tty:
        console.stream.write("\r\x1b[2K")
    return queue


def _starts(running: Mapping[int, _Job]) -> dict[int, float]:
    return {index: job.started for index, job in running.items()}


def _status_of(shard_dir: Path) -> str:
    try:
        return str(json.loads((shard_dir / "outcome.json").read_text(encoding="utf-8"))["status"])
    except (OSError, ValueError, KeyError):
        return "never-started (no outcome.json)"


TRACE_LINES = 40  # per failure printed by `local`: the end of the trace, where the error is
FAILURES_PRINTED = 20  # distinct failures printed by `local`; the rest are in the shards' failures.jsonl


@dataclass(frozen=True)
class LocalResult:
    table: str  # the verdict table (stdout)
    failures: str  # each distinct failure's trace and its shard's output.log (stderr; from tests: untrusted)
    exit_code: int


def aggregate_results(
    plan: Plan,
    out: Path,
    *,
    flaky_result: FlakyResult,
    allow_empty: bool = False,
    files: ReportFiles | None = None,
    console: Console | None = None,
) -> LocalResult:
    """The aggregate stage's verdict over the shard folders: terminal table, failures and exit code;
    ``files`` are written as ``aggregate`` writes them (timings last, their warnings on ``console``)."""
    # only the folders that exist: a shard Ctrl-C kept from starting has none, and is then
    # "never-started" in the verdict rather than an unreadable input that hides the whole table
    dirs = [d for d in (out / shard_dir_name(s.index, plan.total) for s in plan.shards) if d.is_dir()]
    verdict = aggregate_dirs(plan, dirs, flaky_result=flaky_result, allow_empty=allow_empty)
    files = files or ReportFiles()
    if files.junit_out:
        outputs.write_merged_junit(verdict, files.junit_out)
    if files.failures:
        outputs.write_failures(verdict, files.failures)
    if files.summary:
        outputs.write_text(files.summary, render_summary(verdict))  # a named file: written, not appended
    if files.timings_out:
        recorded, warnings = outputs.write_timings(verdict, files.timings_out, variant=files.timings_variant)
        for warning in warnings:
            (console or Console()).warning(warning)
        (console or Console()).line(f"ci-shards: {recorded}")
    table = render_terminal(verdict, every_in=_every_in(files, out)) + _logs(verdict, out)
    return LocalResult(table, failure_details(verdict, out), verdict.exit_code)


def _every_in(files: ReportFiles, out: Path) -> str:
    return complete_in([str(p) for p in (files.summary, files.failures) if p], f"{out}/shard-*/failures.jsonl")


def _logs(verdict: Verdict, out: Path) -> str:
    """Each shard's full output, so a reader goes from the table to the log without looking for it."""
    total = verdict.total_shards
    lines = [
        f"  {s.index}/{total} {s.status.value}: {out / shard_dir_name(s.index, total) / LOG_FILE}"
        for s in verdict.shards
    ]
    return "\noutput.log of each shard:\n" + "".join(f"{line}\n" for line in lines)


def failure_details(verdict: Verdict, out: Path) -> str:
    """Each distinct failure (identical ones grouped): where it failed, the end of its trace, and
    the shard's full output.log, so a local run leads to the fix without opening JUnit files."""
    groups = group_failures(failure_lines(verdict))
    lines: list[str] = []
    for number, group in enumerate(groups[:FAILURES_PRINTED], 1):
        record = group.first
        frame = failing_line(record.text, record.file)
        where = f" at {frame}" if frame else (f" at {record.file}" if record.file else "")
        more = f", and {group.count - 1} more like it" if group.count > 1 else ""
        lines.append(
            f"── failure {number}/{len(groups)}: {record.test_id} "
            f"(shard {record.shard}/{verdict.total_shards}, {record.kind.value}){where}{more}"
        )
        trace = strip_control(restore_first_indent(record.text or record.message)).rstrip().splitlines()
        if len(trace) > TRACE_LINES:
            lines.append(f"    … {len(trace) - TRACE_LINES} lines above")
            trace = trace[-TRACE_LINES:]
        lines += [f"    {line}" for line in trace]
        lines.append(f"    output: {out / shard_dir_name(record.shard, verdict.total_shards) / LOG_FILE}")
    if len(groups) > FAILURES_PRINTED:
        lines.append(f"… and {len(groups) - FAILURES_PRINTED} more distinct failures: {out}/*/failures.jsonl")
    return "".join(f"{line}\n" for line in lines)
