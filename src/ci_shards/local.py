"""``ci-shards local``: plan, run every shard on this machine as parallel processes, aggregate (``run_locally``).

Each shard is a real ``ci-shards run`` child process (its own session, its own subreaper), so a
local run exercises exactly what CI runs. This process is the subreaper of all of them: a second
Ctrl-C kills every tree, including ones whose ``run`` parent is already gone.
"""

from __future__ import annotations

import contextlib
import dataclasses
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

from ci_shards.common import outfile
from ci_shards.common.console import Console, console_for, fmt_seconds, plural, strip_control
from ci_shards.common.errors import EXIT_INTERRUPTED, EXIT_OK, InputError, UsageError
from ci_shards.common.interpreter import default_python, probe
from ci_shards.judge import check_not_empty
from ci_shards.model.outcome import shard_dir_name
from ci_shards.model.plan import Granularity, Plan
from ci_shards.options.typed import LocalOptions, PlanOptions, ReportFiles
from ci_shards.plan.front import make_plan
from ci_shards.plan.pytest_args import check_pytest_words
from ci_shards.report import outputs
from ci_shards.report.aggregate import FlakyResult, aggregate_dirs
from ci_shards.report.artifacts import LOG_FILE
from ci_shards.report.frames import failing_line, restore_first_indent
from ci_shards.report.groups import group_failures
from ci_shards.report.render import complete_in, failure_lines, render_summary, render_terminal
from ci_shards.report.verdict import Verdict
from ci_shards.run import workers
from ci_shards.run.command import ids_warning, uses_items
from ci_shards.run.process import CancelToken, become_subreaper, kill_tree, path_not_command
from ci_shards.run.runner import cancel_on_signals
from ci_shards.run.settings import RunSettings


def available_memory(proc: Path = Path("/proc"), cgroup_root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """Bytes of memory available: MemAvailable, capped by this cgroup's v2 ``memory.max`` headroom."""
    return workers.available_memory(workers.read_machine(proc, cgroup_root))


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
    if options.workers is not None:
        argv += ["--workers", options.workers, "--worker-memory", str(options.worker_memory)]
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
    if options.coverage_map_per != "test":
        argv += ["--coverage-map-per", options.coverage_map_per]
    return [*argv, "--", *command]


def shard_env(env: Mapping[str, str], shard_dir: Path) -> dict[str, str]:
    """A local shard's environment: ``env`` with coverage.py's data file in the shard's own folder. The shards run at
    once in one working folder, so pytest-cov's ``.coverage`` there would be every shard's: its SQLite file written
    by several processes at once ("database disk image is malformed", "no such table: context" under
    --cov-context=test: multidict 7.2.1's 222 errors in conformance run 9), and each shard's combine would take in
    the others' ``.coverage.*`` files. ``COVERAGE_FILE`` outranks a configuration file's ``data_file``; on CI every
    shard has a machine of its own, so ``run`` leaves it as the user set it."""
    return {**env, "COVERAGE_FILE": str((shard_dir / ".coverage").resolve())}


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
    pool = _Pool(plan=plan, jobs=jobs, out=out, console=console, cancel=cancel)
    while pool.queue or pool.running:
        pool.start_ready(argv_for)
        pool.forward_signals()
        pool.reap()
        pool.show_status()
        if cancel.cancelled and not pool.running:
            break
        time.sleep(0.05)
    if pool.tty:
        console.stream.write("\r\x1b[2K")
    return pool.queue


class _Pool:
    """The shards of one ``run_local``: queued, running (at most ``jobs``) and finished, and what is said."""

    def __init__(self, *, plan: Plan, jobs: int, out: Path, console: Console, cancel: CancelToken) -> None:
        self.plan, self.jobs, self.out, self.console, self.cancel = plan, jobs, out, console, cancel
        self.queue = [s.index for s in plan.shards]
        self.estimates = {s.index: s.estimated_seconds for s in plan.shards}
        self.running: dict[int, _Job] = {}
        self.finished: list[tuple[float, float]] = []  # (estimated, actual) seconds of each finished shard
        self.done = 0
        self.t0 = time.monotonic()
        self.tty = console.stream.isatty()
        self.forwarded = 0
        self.status_at = 0.0

    def say(self, text: str) -> None:
        """An event line; on a terminal it first erases the live status line."""
        if self.tty:
            self.console.stream.write("\r\x1b[2K")
        self.console.line(text)

    def start_ready(self, argv_for: Any) -> None:
        plan = self.plan
        while self.queue and len(self.running) < self.jobs and not self.cancel.cancelled:
            index = self.queue.pop(0)
            shard_dir = self.out / shard_dir_name(index, plan.total)
            shard_dir.mkdir(parents=True, exist_ok=True)
            log = (shard_dir / "console.log").open("wb")
            proc = subprocess.Popen(
                argv_for(index),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=shard_env(os.environ, shard_dir),
            )
            self.running[index] = _Job(index, proc, time.monotonic(), log)
            self.say(f"shard {index}/{plan.total} started (estimated {fmt_seconds(self.estimates[index])})")

    def forward_signals(self) -> None:
        """The first signal to ci-shards asks the shards to stop (SIGINT); a second one kills the tree."""
        if len(self.cancel.signals) <= self.forwarded:
            return
        if self.forwarded == 0:
            self.say(f"interrupted: stopping {plural(len(self.running), 'running shard')}; Ctrl-C again to kill them")
            for job in self.running.values():
                with contextlib.suppress(ProcessLookupError):
                    job.proc.send_signal(signal.SIGINT)
        else:
            kill_tree(os.getpid(), None)
        self.forwarded = len(self.cancel.signals)

    def reap(self) -> None:
        total = self.plan.total
        for index, job in list(self.running.items()):
            if job.proc.poll() is None:
                continue
            job.log.close()
            del self.running[index]
            self.done += 1
            status = _status_of(self.out / shard_dir_name(index, total))
            now = time.monotonic()
            self.finished.append((self.estimates[index], now - job.started))
            eta = self._eta(now)
            self.say(
                f"[{self.done}/{total}] shard {index}/{total} {status} in {fmt_seconds(now - job.started)}"
                + (
                    f", ETA {fmt_eta(eta)}"
                    if self.queue or self.running
                    else f", all done in {fmt_seconds(now - self.t0)}"
                )
            )

    def show_status(self) -> None:
        """On a terminal, at most twice a second: the running shards, the queue and the ETA on one line."""
        if self.tty and self.running and time.monotonic() - self.status_at >= 0.5:
            self.status_at = time.monotonic()
            names = " ".join(str(i) for i in self.running)
            line = f"\r  running: {names} | queued: {len(self.queue)} | ETA {fmt_eta(self._eta(self.status_at))}   \r"
            self.console.stream.write(line)
            self.console.stream.flush()

    def _eta(self, now: float) -> Eta:
        starts = _starts(self.running)
        return estimate_eta(now, starts, self.queue, self.estimates, jobs=self.jobs, finished=self.finished)


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


def _jobs(options: LocalOptions, shards: int, console: Console) -> int:
    """Shards at once: ``--jobs J|auto``, and no more than the CPUs hold with each shard's K workers."""
    if options.jobs == "auto":
        jobs = auto_jobs(shards, cores=cores(), memory=available_memory(), job_memory=options.job_memory)
    elif options.jobs.isdigit() and int(options.jobs) > 0:
        jobs = min(int(options.jobs), shards)
    else:
        msg = f"--jobs {options.jobs!r}: expected auto or a positive number"
        raise UsageError(msg)
    per_shard = _workers_text(options)
    jobs, crowded = workers.local_jobs(jobs, per_shard, cpus=cores(), given=options.jobs != "auto")
    if crowded:
        console.warning(crowded)
    return jobs


def _workers_text(options: LocalOptions) -> str | None:
    """Each shard's ``--workers`` as given to ``run``, else to ``plan`` (the K the plan is made for)."""
    return options.run.workers if options.run.workers is not None else options.plan.workers


def run_locally(options: LocalOptions, *, env: dict[str, str], cwd: Path) -> int:
    """``local``'s front door: plan (``plan.front.make_plan``), run every shard here, aggregate, and the exit code.
    The verdict table goes to stdout; progress and each failure's details to the console."""
    console = console_for(env)
    raw = list(options.run.command)
    if options.run.pytest:
        check_pytest_words(raw, cwd)
        options = _with_python(options, env, cwd)
    if not options.run.pytest and not raw:
        msg = "no command given: add `-- CMD ARGS... {items}` or use --pytest"
        raise UsageError(msg)
    if not options.run.pytest and (not_a_command := path_not_command(raw[0])):
        # every shard would fail to start it: say so once, before planning (run says it per shard, in its artifact)
        msg = f"cannot run {raw[0]!r}: {not_a_command}"
        raise UsageError(msg)
    if (options.fail_under is not None or options.coverage_base is not None) and not options.run.coverage:
        msg = "--fail-under and --coverage-base need --coverage (or the config key coverage: true)"
        raise UsageError(msg)
    plan_options = _local_plan_options(options, raw, console)
    plan = make_plan(plan_options, env=env, cwd=cwd, pytest_args=raw if options.run.pytest else None, cap_to_items=True)
    out = options.run.out
    plan_path = out / "plan.json"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(out, f"cannot write the results folder (--out): {err.strerror or err}") from None
    outfile.write_atomic(plan_path, plan.dumps())
    allowed = options.plan.allow_empty
    check_not_empty(plan, allowed=allowed)  # nothing to run: say so before starting anything
    if not options.run.pytest and uses_items(raw) and (warning := ids_warning(plan.files_cut_into_ids(), "")):
        console.warning(warning)  # once here (--granularity auto or test asked for): local does not show run's logs
    command = raw  # with --pytest, the plugin drops the arguments that select tests (and says so)
    jobs = _jobs(options, plan.total, console)
    console.line(
        f"ci-shards local: {plural(len(plan.items), 'item')} in {plural(plan.total, 'shard')}, {jobs} at a time, "
        f"estimated {fmt_seconds(plan.estimated_makespan)} per shard at most{_guessed(plan)}; results in {out}"
    )
    cancel = CancelToken()
    with cancel_on_signals(cancel):
        never = run_local(
            plan=plan,
            plan_path=plan_path,
            jobs=jobs,
            argv_for=lambda i: run_argv(options.run, plan_path, i, plan.total, command),
            out=out,
            console=console,
            cancel=cancel,
        )
    if never:
        console.warning(f"never started (interrupted): shards {', '.join(map(str, never))}")
    result = aggregate_results(
        plan, out, flaky_result=options.run.flaky_result, allow_empty=allowed, files=options.reports, console=console
    )
    if result.failures:
        console.untrusted(result.failures)  # test output: on GitHub it cannot issue workflow commands
    # the table on stdout here, before the coverage is folded: the verdict shows first on a terminal
    sys.stdout.write(result.table)
    sys.stdout.flush()
    code = max(result.exit_code, _local_coverage(options, plan, cwd, env, console))
    return EXIT_INTERRUPTED if cancel.cancelled else code


def _local_plan_options(options: LocalOptions, command: Sequence[str], console: Console) -> PlanOptions:
    """The plan options for shards that run at once in this one working tree: a first plan is not dealt over them
    (``deal_untimed``), since tests of one file often share its data folders (babel 2.19.0's test_init.py, dealt
    over two shards, removed a folder the other shard's test of it was using). And whole files when a command given
    ``{items}`` runs a discovery plan and no ``--granularity`` was asked for: such a command runs only the ids it is
    given, so a file cut into its timed tests' ids would leave a test added to it since (or its doctests) in no
    shard, where a file item runs them all (ids_warning; ``--pytest``'s plugin runs every test pytest collects, so
    its plans may cut files)."""
    plan = dataclasses.replace(options.plan, deal_untimed=False)
    if options.run.pytest or not plan.discover or not uses_items(command):
        return plan
    if plan.granularity is not Granularity.AUTO or "--granularity" in plan.given:
        return plan
    console.line(
        "ci-shards local: whole test files planned: the command's {items} runs only the ids it is given, and a file"
        " cut by test id would leave out its tests added since the timings (--granularity auto cuts anyway)"
    )
    return dataclasses.replace(plan, granularity=Granularity.FILE)


def _guessed(plan: Plan) -> str:
    """Said beside the estimate when it has no timing behind it: a first run's "estimated 11.0s" is the
    default second per test (``plan.estimates``), which a 3-second shard makes look like a broken tool."""
    if not plan.unknown_items:
        return ""
    if plan.unknown_items >= len(plan.items):
        return " (a guess: no timings yet, the shards are balanced by their tests' count)"
    return f" ({plan.unknown_items} of {len(plan.items)} items guessed: no timing yet)"


def _with_python(options: LocalOptions, env: Mapping[str, str], cwd: Path) -> LocalOptions:
    """The one interpreter of the collection and every shard, checked once here (no pytest, no coverage.py for
    --coverage, no pytest-xdist for --workers K: exit 2 before anything starts, not once per shard) and passed to
    each ``run`` as ``--python``."""
    interpreter = probe(default_python(options.run.python, env), env)
    requested = workers.parse_workers(_workers_text(options))
    if requested is not None and requested > 1:  # auto falls back to 1 in each shard, with a warning
        off = workers.xdist_turned_off(cwd, env, options.run.command)
        refusal = workers.xdist_refusal(
            requested, has_xdist=interpreter.has_xdist, xdist_off=off, python=interpreter.path
        )
        if refusal:
            raise UsageError(refusal)
    if options.run.coverage:
        from ci_shards.coverage.collect import Tool, check_available  # noqa: PLC0415  (as _local_coverage's)

        check_available(Tool.COVERAGE_PY, interpreter)
    python = interpreter.path
    return dataclasses.replace(
        options,
        plan=dataclasses.replace(options.plan, python=python),
        run=dataclasses.replace(options.run, python=python),
    )


def _local_coverage(options: LocalOptions, plan: Plan, cwd: Path, env: dict[str, str], console: Console) -> int:
    """``local --coverage``: fold every shard's coverage into the results folder (docs/coverage.md)."""
    if not options.run.coverage:
        return EXIT_OK
    from ci_shards.coverage.publish import publish_reported  # noqa: PLC0415

    reported = publish_reported(
        plan,
        [options.run.out],
        out=options.run.out,
        root=cwd,
        fail_under=options.fail_under,
        base=options.coverage_base,
        env=env,
        console=console,
    )
    return reported.exit_code
