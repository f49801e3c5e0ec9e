"""Run one shard: build its command(s), run them under the deadline, re-run failures, write the artifacts.

The edge of the run stage. Processes are ``process.run_process``; what the results mean is
``classify.decide`` (pure); this module wires them: batches that fit ARG_MAX, the private TMPDIR,
the shard environment variables, reading each run's report, re-runs of only the failed tests,
and the artifact folder (docs/run.md, "The artifact folder").
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ci_shards.common.console import Console, fmt_duration, plural
from ci_shards.common.errors import InputError, UsageError
from ci_shards.common.globs import match_files
from ci_shards.common.interpreter import Interpreter, plugin_env, probe
from ci_shards.coverage import collect as coverage_collect
from ci_shards.junit import JUnitError, parse_junit
from ci_shards.junit.read import collectors_by_file
from ci_shards.model.matching import item_file
from ci_shards.model.outcome import CaseOutcome, Outcome, shard_dir_name
from ci_shards.model.plan import Plan
from ci_shards.plan.pytest_args import env_addopts, names_rootdir_or_config, xdist_workers_in
from ci_shards.run import command as cmd
from ci_shards.run.classify import Policy, Report, Run, decide, report_from_events
from ci_shards.run.exit_causes import exit_cause
from ci_shards.run.process import CancelToken, Limits, ProcessResult, become_subreaper, run_process
from ci_shards.run.settings import RunSettings
from ci_shards.run.shard_output import (
    attempt_entry,
    build_outcome,
    clear_stale,
    now_rfc3339,
    print_summary,
    write_outcome,
    write_report,
)
from ci_shards.run.spool import LiveTail, read_tail
from ci_shards.run.workers import (
    AUTO,
    MachineFiles,
    WorkerChoice,
    parse_workers,
    read_machine,
    shard_workers,
    xdist_turned_off,
)

# how much of a failed run's last output is searched for its cause (run.exit_causes): a tool's closing lines
EXIT_CAUSE_BYTES: Final = 8 * 1024


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    plan: Plan
    plan_path: Path
    shard_index: int
    # out, the command (the template; with ``pytest`` the extra pytest arguments), --junit (PATH or GLOB where
    # the command writes its report), the deadline, retries and the rest as the user set them
    settings: RunSettings
    live: bool = False
    cwd: Path = field(default_factory=Path.cwd)
    env: Mapping[str, str] = field(default_factory=dict)
    python: str = sys.executable
    arg_limit: int | None = None  # ARG_MAX override (tests)
    coverage: coverage_collect.CoverageRequest | None = None  # run --coverage


@contextlib.contextmanager
def cancel_on_signals(cancel: CancelToken) -> Iterator[None]:
    """SIGINT/SIGTERM/SIGHUP (CI cancelling the job, executor.md §6.5) only mark the run cancelled."""
    previous: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            previous[signum] = signal.signal(signum, lambda s, _f: cancel.trigger(s))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _rmtree(path: Path) -> None:
    """Remove a scratch dir even when tests left read-only files or directories behind."""

    def fix(_func: Any, target: str, _exc: Any) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
            if os.path.isdir(target):
                shutil.rmtree(target, ignore_errors=True)
            else:
                os.unlink(target)

    shutil.rmtree(path, onerror=fix)  # onexc is 3.12+; onerror still works
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)


class _ShardRun:
    """The mutable state of one ``run_shard`` call."""

    def __init__(
        self,
        opts: RunOptions,
        console: Console,
        cancel: CancelToken,
        work: Path,
        log: Any,
        *,
        coverage: coverage_collect.Collector | None = None,
        interpreter: Interpreter | None = None,
        workers: int = 1,
    ) -> None:
        self.opts = opts
        self.workers = workers  # pytest-xdist workers (1: none)
        self.interpreter = interpreter  # with --pytest: the Python that runs it
        self.console = console
        self.cancel = cancel
        self.work = work
        self.log = log
        self.runs: list[Run] = []
        self.attempts: list[dict[str, Any]] = []
        self.leaked: list[str] = []
        self.counter = 0
        self.deadline = time.monotonic() + opts.settings.timeout if opts.settings.timeout else None
        self.total = opts.plan.total
        self.name = shard_dir_name(opts.shard_index, self.total)
        self.coverage = coverage

    def env(self, tmpdir: Path) -> dict[str, str]:
        env = dict(self.opts.env)
        env.update(
            TMPDIR=str(tmpdir),
            TEMP=str(tmpdir),
            TMP=str(tmpdir),
            CI_SHARDS_INDEX=str(self.opts.shard_index),
            CI_SHARDS_TOTAL=str(self.total),
            TEST_SHARD_INDEX=str(self.opts.shard_index - 1),  # Bazel's protocol is 0-based
            TEST_TOTAL_SHARDS=str(self.total),
            CI_SHARDS_PLAN=str(self.opts.plan_path.resolve()),
        )
        if self.coverage is not None:
            env.update(self.coverage.environment())
        return env if self.interpreter is None else plugin_env(self.interpreter, env, self.work / "plugin")

    def stopped(self) -> bool:
        return self.cancel.cancelled or (self.deadline is not None and time.monotonic() >= self.deadline)

    def execute(self, items: Sequence[str], *, rerun: int, env: Mapping[str, str]) -> list[Run]:
        """Run the command for ``items`` (in as many batches as ARG_MAX needs); one Run per process."""
        template = self._template(rerun=rerun)
        limit = self.opts.arg_limit or cmd.os_arg_limit()
        if self.opts.settings.pytest:
            groups = [list(items)]  # the plugin selects inside pytest: no file on the command line, no batches
        else:
            groups = cmd.batches(template, items, limit=limit, environment_bytes=cmd.env_size(env))
        runs: list[Run] = []
        for number, group in enumerate(groups, 1):
            if self.stopped() and (runs or rerun):
                break
            runs.append(self._one(template, group, rerun=rerun, batch=(number, len(groups)), env=env))
            if runs[-1].start_error:
                break
        done = {i for r in runs for i in r.items}
        if len(runs) < len(groups) and rerun == 0 and not runs[-1].start_error:
            # never launched because the deadline passed or the job was cancelled: the accounting sees them unreported
            runs.append(
                Run(
                    rerun=0,
                    items=tuple(i for i in items if i not in done),
                    exit_code=None,
                    signal=None,
                    timed_out=not self.cancel.cancelled,
                    cancelled=self.cancel.cancelled,
                )
            )
        return runs

    def _template(self, *, rerun: int) -> list[str]:
        if not self.opts.settings.pytest:
            template = list(self.opts.settings.command)
        else:
            base = [self.opts.python, "-m", "pytest", "-p", "ci_shards", "--continue-on-collection-errors"]
            # loadfile: a file's tests go to one worker, so its module and class fixtures set up once, as
            # in the plan that kept it whole (xdist docs, "--dist loadfile"); before the user's arguments,
            # so their own -n/--dist win; `-p xdist` (its entry point's name) loads it where pytest loads no
            # plugin by itself (PYTEST_DISABLE_PLUGIN_AUTOLOAD, --disable-plugin-autoload), as xdist's docs say
            xdist = ["-p", "xdist", "-n", str(self.workers), "--dist", "loadfile"] if self.workers > 1 else []
            template = [*base, *xdist, *self.opts.settings.command]
        return self.coverage.wrap(template) if self.coverage is not None else template

    def _one(
        self,
        template: Sequence[str],
        items: Sequence[str],
        *,
        rerun: int,
        batch: tuple[int, int],
        env: Mapping[str, str],
    ) -> Run:
        self.counter += 1
        stem = self.work / f"run-{self.counter}"
        items_file = stem.with_suffix(".items")
        items_file.write_text("".join(f"{i}\n" for i in items), encoding="utf-8")
        junit_path = stem.with_suffix(".xml")
        events = stem.with_suffix(".events.jsonl")
        argv = cmd.expand(
            template,
            items=() if self.opts.settings.pytest else items,
            items_file=str(items_file),
            junit=str(junit_path),
        )
        if self.opts.settings.pytest:
            argv += self._plugin_args(items_file, events, rerun=rerun)
        title = self._announce(argv, len(items), rerun=rerun, batch=batch)
        stale_before = self._report_mtimes()
        started = time.time()
        offset = self.log.tell()
        limits = self._limits()
        with _live_output(self.console, Path(self.log.name), title, offset, live=self.opts.live):
            result = run_process(argv, env=env, cwd=self.opts.cwd, spool=self.log, limits=limits, cancel=self.cancel)
        self.log.seek(0, 2)
        self.leaked.extend(result.leaked)
        report = self._read_report(result, events, junit_path, stale_before, started)
        self.attempts.append(
            attempt_entry(argv=argv, result=result, rerun=rerun, batch=batch, items=len(items), tests=len(report.cases))
        )
        failed = result.exit_code not in (0, None)
        return Run(
            rerun=rerun,
            items=tuple(items),
            exit_code=result.exit_code,
            signal=result.signal,
            start_error=result.start_error,
            timed_out=result.timed_out,
            cancelled=result.cancelled,
            report=report,
            exit_cause=exit_cause(read_tail(Path(self.log.name), EXIT_CAUSE_BYTES, since=offset)) if failed else "",
        )

    def _announce(self, argv: Sequence[str], items: int, *, rerun: int, batch: tuple[int, int]) -> str:
        """Write the run's header line into output.log (and to the console for a batch or a re-run when
        the output is not live); the group title it returns leaves the command out."""
        label = f"re-run {rerun}" if rerun else "run"
        header = (
            f"==> ci-shards {self.name}: {label}, batch {batch[0]}/{batch[1]}, {plural(items, 'item')}: "
            f"{shlex.join(argv)[:2000]}\n"
        )
        self.log.write(header.encode(errors="replace"))
        self.log.flush()
        if (batch[1] > 1 or rerun) and not self.opts.live:
            self.console.line(header.rstrip()[:300])
        # without the command: its arguments hold test ids (untrusted), and a group title is not fenced
        return f"ci-shards {self.name}: {label}, batch {batch[0]}/{batch[1]}, {plural(items, 'item')}"

    def _limits(self) -> Limits:
        settings = self.opts.settings
        return Limits(
            deadline=self.deadline,
            graceful_signal=settings.graceful_signal,
            grace=settings.grace,
            cancel_grace=min(settings.grace, 5.0),
            leak_timeout=settings.leak_timeout,
        )

    def _plugin_args(self, items_file: Path, events: Path, *, rerun: int) -> list[str]:
        """The plugin's options after the user's own arguments, which select what pytest walks as in a
        plain run; the plugin keeps this shard's tests. (--opt=value: a free-standing path would take
        part in pytest's rootdir search.)"""
        if rerun:  # only the failed tests, by id
            args = [f"--ci-shards-select={items_file}"]
        else:  # the plan selects (tests it does not know included)
            args = [
                f"--ci-shards-plan={self.opts.plan_path.resolve()}",
                f"--ci-shards-shard={self.opts.shard_index}/{self.total}",
            ]
        return [*args, f"--ci-shards-report={events}", *self._rootdir_args()]

    def _rootdir_args(self) -> list[str]:
        """A pytest plan's rootdir, forced, so node ids come out as the plan wrote them; and the settings file
        pytest finds only through its arguments' own folders, which a forced rootdir hides from it."""
        if self.opts.plan.rootdir is None:
            return []
        root = (self.opts.cwd / self.opts.plan.rootdir).resolve()
        return [f"--rootdir={root}", f"--ci-shards-ids-root={root}", *self._hidden_config_args()]

    def _hidden_config_args(self) -> list[str]:
        """``--config-file`` naming the settings that ``pytest proj_a/tests proj_b/tests`` reads from proj_a (no
        settings above both): with ``--rootdir`` pytest skips that search and ran both folders by its defaults (4
        tests where plain pytest, with proj_a's python_files, ran 2). Nothing when the user names them already."""
        from ci_shards.plan.discover import config_only_by_arguments  # noqa: PLC0415 (a plan stage reader)

        try:
            words = [*env_addopts(os.environ), *self.opts.settings.command]  # pytest's rootdir search sees both
        except UsageError:  # pytest itself fails on it, in the shard's output
            return []
        if names_rootdir_or_config(words):
            return []
        found = config_only_by_arguments(words, self.opts.cwd)
        return [f"--config-file={found}"] if found else []

    def _report_mtimes(self) -> dict[str, float]:
        return {p: os.path.getmtime(p) for p in self._junit_files()}

    def _junit_files(self) -> list[str]:
        """The reports ``--junit`` names, as absolute paths (none without ``--junit``)."""
        if not self.opts.settings.junit:
            return []
        return [str(self.opts.cwd / hit) for hit in match_files(self.opts.settings.junit, cwd=self.opts.cwd)]

    def _read_report(
        self, result: ProcessResult, events: Path, junit_path: Path, before: Mapping[str, float], started: float
    ) -> Report:
        if not result.started:
            return Report(problem="never started")
        if self.opts.settings.pytest:
            if not events.exists():
                return Report(problem="no test report (pytest did not load the ci-shards plugin or died at once)")
            with events.open(encoding="utf-8", errors="replace") as handle:
                return report_from_events(handle)
        paths: list[Path] = []
        if cmd.uses_junit(self.opts.settings.command):
            paths = [junit_path] if junit_path.exists() else []
        elif self.opts.settings.junit:
            found = self._junit_files()
            fresh = [p for p in found if p not in before or os.path.getmtime(p) > before[p]]
            fresh = [p for p in fresh if os.path.getmtime(p) >= started - 1]
            if found and not fresh:
                return Report(problem=f"stale test report: {self.opts.settings.junit} was not rewritten by this run")
            paths = [Path(p) for p in sorted(fresh)]
        if not paths:
            return Report(problem="no test report")
        cases = []
        for path in paths:
            try:
                cases.extend(parse_junit(path))
            except JUnitError as err:
                return Report(problem=f"unparseable test report: {err}")
        return Report(cases=tuple(collectors_by_file(cases, self.opts.plan.shard(self.opts.shard_index).items)))


def _failing_ids(runs: Sequence[Run]) -> list[str]:
    latest: dict[str, CaseOutcome] = {}
    for run in runs:
        for case in run.report.cases:
            if run.rerun == 0 or case.test_id in latest:
                latest[case.test_id] = case.outcome
    return [t for t, o in latest.items() if o.is_bad]


def _live_output(
    console: Console, log: Path, title: str, offset: int, *, live: bool
) -> contextlib.AbstractContextManager[object]:
    """Live output of one batch or re-run: under its header, which on GitHub is a collapsible
    ``::group::`` around output fenced against workflow commands (LiveTail); nothing when not live."""
    if not live:
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    stack.enter_context(console.group(title))
    stack.enter_context(LiveTail(log, console, offset))
    return stack


def run_shard(opts: RunOptions, *, console: Console, cancel: CancelToken) -> Outcome:
    """Run the shard and write its artifact folder; the Outcome says how it went."""
    plan = opts.plan
    _check_runnable(opts)
    planned = plan.shard(opts.shard_index).items
    _warn_of_cut_files(opts, console)
    shard_dir = opts.settings.out / shard_dir_name(opts.shard_index, plan.total)
    log_path = shard_dir / "output.log"
    _prepare_folder(shard_dir, log_path)
    settings = opts.settings
    # before the folder has a log: an interpreter without pytest fails the command here (exit 2), clearly
    interpreter = probe(opts.python, opts.env) if settings.pytest else None
    workers = _workers(opts, interpreter, planned, console)
    coverage = _coverage(opts, shard_dir, interpreter)
    subreaper = become_subreaper()
    started_at, t0 = now_rfc3339(), time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="ci-shards-work-"))
    tmpdir = Path(tempfile.mkdtemp(prefix="ci-shards-tmp-"))
    try:
        with log_path.open("w+b") as log:
            state = _ShardRun(
                opts, console, cancel, work, log, coverage=coverage, interpreter=interpreter, workers=workers.count
            )
            if planned:
                _run_planned(state, planned, tmpdir, workers.reason)
            verdict = decide(
                shard_index=opts.shard_index,
                shard_name=state.name,
                planned=planned,
                runs=state.runs,
                policy=_policy(settings),
            )
            if state.leaked:
                console.warning(
                    f"{state.name}: {len(state.leaked)} process(es) outlived the test command and were killed"
                )
    finally:
        _rmtree(tmpdir)
        _rmtree(work)
    verdict = write_report(shard_dir, verdict, name=state.name, planned=planned, shard_index=opts.shard_index)
    outcome = build_outcome(
        plan=opts.plan,
        shard_index=opts.shard_index,
        env=opts.env,
        runs=state.runs,
        attempts=state.attempts,
        leaked=state.leaked,
        verdict=verdict,
        started_at=started_at,
        elapsed=time.monotonic() - t0,
        planned=planned,
        log_path=log_path,
        subreaper=subreaper,
    )
    if coverage is not None:
        outcome = _with_coverage(outcome, coverage, state, console)
    write_outcome(shard_dir, outcome, verdict.records)
    print_summary(console, outcome, verdict, log_path)
    return outcome


def _warn_of_cut_files(opts: RunOptions, console: Console) -> None:
    """A command given ``{items}`` runs only the test ids of a file the plan cut: say which files (``ids_warning``)."""
    if opts.settings.pytest or not cmd.uses_items(opts.settings.command):
        return
    if warning := cmd.ids_warning(opts.plan.files_cut_into_ids(opts.shard_index), " of this shard"):
        console.warning(warning)


def _run_planned(state: _ShardRun, planned: Sequence[str], tmpdir: Path, workers_reason: str) -> None:
    """The shard's first run of every planned item (in batches), then the re-runs of its failures; its
    first line says how many items, the timeout, the Python and how the workers were chosen."""
    timeout = state.opts.settings.timeout
    limit = fmt_duration(timeout) if timeout else "none"
    python = f", {state.interpreter.describe()}" if state.interpreter is not None else ""
    how = f", {workers_reason}" if workers_reason else ""
    state.console.line(f"ci-shards {state.name}: {plural(len(planned), 'item')}, timeout {limit}{python}{how}")
    env = state.env(tmpdir)
    state.runs.extend(state.execute(planned, rerun=0, env=env))
    _rerun(state, env)


def _check_runnable(opts: RunOptions) -> None:
    """Usage and input errors found before anything is written or run (exit 2)."""
    plan = opts.plan
    if not 1 <= opts.shard_index <= plan.total:
        msg = f"shard {opts.shard_index} is not in the plan's 1..{plan.total}"
        raise UsageError(msg)
    if not opts.settings.pytest and not opts.settings.command:
        msg = "no command given: add `-- CMD ARGS... {items}` or use --pytest"
        raise UsageError(msg)
    if plan.rootdir is not None and not (opts.cwd / plan.rootdir).is_dir():
        msg = (
            f"the plan's pytest rootdir {plan.rootdir!r} is not a folder under {opts.cwd}:"
            " run from the folder the plan was made in"
        )
        raise InputError(opts.plan_path, msg)


def _prepare_folder(shard_dir: Path, log_path: Path) -> None:
    """The shard's folder, cleared of an earlier run's files, with a writable log."""
    try:
        shard_dir.mkdir(parents=True, exist_ok=True)
        clear_stale(shard_dir)
        log_path.open("wb").close()  # writable? fail here, before anything runs, not mid-shard
    except OSError as err:
        raise InputError(shard_dir, f"cannot write the results folder (--out): {err.strerror or err}") from None


def _policy(settings: RunSettings) -> Policy:
    return Policy(
        accept_exit_code=settings.accept_exit_code,
        flaky_result=settings.flaky_result,
        max_test_seconds=settings.max_test_seconds,
        timeout_seconds=settings.timeout,
    )


def _with_coverage(
    outcome: Outcome, coverage: coverage_collect.Collector, state: _ShardRun, console: Console
) -> Outcome:
    """The outcome with its coverage entry; a coverage problem is a warning, never the tests' verdict."""
    launched = sum(1 for a in state.attempts if not a["start_error"])
    entry = coverage.describe(source_root=state.opts.cwd, launched=launched)
    if entry["problem"]:
        console.warning(f"{state.name}: coverage: {entry['problem']} (the tests' verdict is unaffected)")
    return dataclasses.replace(outcome, coverage=entry)


def _coverage(opts: RunOptions, shard_dir: Path, interpreter: Interpreter | None) -> coverage_collect.Collector | None:
    """``--coverage``'s collector, checked where the tests run (``interpreter``: ``--pytest``'s Python)."""
    settings = opts.settings
    return coverage_collect.start(
        opts.coverage,
        command=settings.command,
        pytest=settings.pytest,
        python=opts.python,
        shard_dir=shard_dir,
        interpreter=interpreter,
    )


def _workers(
    opts: RunOptions, interpreter: Interpreter | None, planned: Sequence[str], console: Console
) -> WorkerChoice:
    """The shard's pytest-xdist workers (docs/run.md#workers) and why; "" reason: one, as always before."""
    given, plan_k = opts.settings.workers, opts.plan.workers
    if interpreter is None:  # a command of the user's own: ci-shards cannot add -n to it
        if given is not None and parse_workers(given) != 1:
            msg = f"--workers {given} needs --pytest (ci-shards adds pytest-xdist's -n to the pytest it runs)"
            raise UsageError(msg)
        if plan_k > 1:
            console.warning(
                f"the plan was made for {plan_k} workers per shard; without --pytest the command runs as given"
            )
        return WorkerChoice(1, "")
    if given is None and plan_k == 1:
        _warn_project_xdist(console)
        return WorkerChoice(1, "")
    machine = read_machine() if (given or "").strip().lower() == AUTO else MachineFiles()
    choice, warnings = shard_workers(
        given,
        planned=plan_k,
        has_xdist=interpreter.has_xdist,
        machine=machine,
        worker_memory=opts.settings.worker_memory,
        scopes=len({item_file(i) for i in planned}),
        python=interpreter.path,
        xdist_off=xdist_turned_off(Path.cwd(), os.environ, opts.settings.command),
    )
    for warning in warnings:
        console.warning(warning)
    return choice


def _warn_project_xdist(console: Console) -> None:
    """The project's own addopts may start pytest-xdist (``-n auto``) where the plan assumed one worker per shard:
    the shard still runs every test once, but faster than its estimate, and the overhead learned from it is wrong."""
    from ci_shards.plan.discover import find_settings  # noqa: PLC0415 (the plan stage's reader: not on every run's start-up)

    settings = find_settings(Path.cwd())
    try:
        given = xdist_workers_in([*settings.addopts, *env_addopts(os.environ)])
    except UsageError:  # pytest itself fails on it, in the shard's output: no warning to add
        return
    if given:
        where = f"addopts in {Path(settings.source).name}" if settings.source else "PYTEST_ADDOPTS"
        console.warning(
            f"{where} start pytest-xdist (-n {given}) in every shard, but the plan was made for 1 worker per shard:"
            f" plan with --workers {given} (workers: {given}) so its estimates are the shards' real times"
        )


def _rerun(state: _ShardRun, env: Mapping[str, str]) -> None:
    opts = state.opts
    if opts.settings.retries <= 0 or any(r.start_error or r.timed_out or r.cancelled for r in state.runs):
        return
    if not opts.settings.pytest and not cmd.uses_items(opts.settings.command):
        state.console.warning("re-runs need {items} or {items_file} in the command (or --pytest); skipped")
        return
    failing = _failing_ids(state.runs)
    if len(failing) > opts.settings.max_rerun_failures:
        state.console.warning(
            f"{len(failing)} failures > --max-rerun-failures {opts.settings.max_rerun_failures}: "
            "a real break, not flakes; no re-runs"
        )
        return
    for attempt in range(1, opts.settings.retries + 1):
        if not failing or state.stopped():
            return
        new = state.execute(failing, rerun=attempt, env=env)
        state.runs.extend(new)
        if any(r.timed_out or r.cancelled or r.start_error for r in new):
            return
        failing = _failing_ids(state.runs)
