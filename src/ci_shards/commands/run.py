"""``ci-shards run`` (one shard of a plan) and ``ci-shards local`` (plan, run every shard here, aggregate)."""

from __future__ import annotations

import argparse
import math
import os
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ci_shards.commands.aggregate import add_coverage_options, add_flaky_result
from ci_shards.config import allow_empty, load_config
from ci_shards.console import Console, console_for, fmt_seconds, is_ci
from ci_shards.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, InputError, UsageError
from ci_shards.judge import FlakyResult
from ci_shards.model import RESULTS_DIR, Plan
from ci_shards.plan.matrix import resolve_shard
from ci_shards.planfile import load_plan

if TYPE_CHECKING:
    from ci_shards.coverage.collect import CoverageRequest

# Imported inside the handlers, and only these (docs/benchmarks.md, "Start-up time per subcommand"):
# the runner (run.runner, run.process: ~25 ms), ci_shards.local and coverage (coverage.py: ~15-30 ms),
# which every other subcommand would otherwise pay at start-up; and commands.plan, which imports this
# module (check_pytest_words), so a top-level import would be a cycle.

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(ms|s|m|h)?\s*$")
DEFAULT_JOB_MEMORY = 1 << 30
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(text: str) -> float:
    """``30m``, ``10s``, ``1.5h``, ``500ms`` or plain seconds (0 or more)."""
    match = _DURATION.match(text)
    if not match:
        hint = " (it must not be negative)" if text.strip().startswith("-") else ""
        msg = f"{text!r} is not a duration{hint} (e.g. 30m, 10s, 1.5h, 500ms)"
        raise argparse.ArgumentTypeError(msg)
    return float(match.group(1)) * _UNITS[match.group(2)]


def parse_timeout(text: str) -> float:
    """A duration above 0: ``--timeout 0`` must not silently mean "no limit"."""
    seconds = parse_duration(text)
    if seconds <= 0:
        msg = f"{text!r}: the timeout must be above 0 (leave --timeout out for no limit)"
        raise argparse.ArgumentTypeError(msg)
    return seconds


def parse_seconds(text: str) -> float:
    """A finite number of seconds above 0 (``nan`` would silently disable a budget, ``-1`` fail every test)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        msg = f"{text!r} is not a number of seconds above 0"
        raise argparse.ArgumentTypeError(msg)
    return value


def parse_size(text: str) -> int:
    """``512M``, ``2G``, ``1.5g``, ``1024`` (bytes); at least one byte, finite."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    raw = text.strip().lower().rstrip("ib").rstrip("b")
    factor = 1
    if raw and raw[-1] in units:
        raw, factor = raw[:-1], units[raw[-1]]
    try:
        value = float(raw) * factor
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 1:
        msg = f"{text!r} is not a size above 0 (e.g. 512M, 2G)"
        raise argparse.ArgumentTypeError(msg)
    return int(value)


def parse_signal(text: str) -> int:
    """A signal this platform has, by name (``SIGINT``, ``term``) or number; never 0 (it sends nothing)."""
    name = text.strip().upper()
    if name.isdigit():
        number = int(name)
    else:
        try:
            number = int(signal.Signals[name if name.startswith("SIG") else "SIG" + name])
        except KeyError:
            number = 0
    if number == 0 or number not in {int(s) for s in signal.valid_signals()}:
        msg = f"{text!r} is not a signal of this platform (e.g. SIGINT, SIGTERM, 15)"
        raise argparse.ArgumentTypeError(msg)
    return number


def add_execution_options(parser: argparse.ArgumentParser, *, pytest_flag: bool = True) -> None:
    """Options shared by ``run`` and ``local``: how each shard's command runs.

    ``local`` passes ``pytest_flag=False``: its plan options already define ``--pytest``, which there
    means both "collect with pytest" and "run with pytest".
    """
    parser.add_argument("--out", type=Path, default=Path(RESULTS_DIR), help=f"results folder (default: {RESULTS_DIR})")
    if not pytest_flag:
        return _add_run_options(parser)
    parser.add_argument(
        "--pytest",
        action="store_true",
        help="run `python -m pytest` on the shard's own files with the bundled plugin selecting its node ids; "
        "arguments after -- are extra pytest options (paths, node ids and --pyargs targets among them are dropped"
        " and named; the plan's unowned_shard collects the paths, to run test files no shard owns) (default: off)",
    )
    _add_run_options(parser)


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--junit",
        metavar="PATH|GLOB",
        default=None,
        help="where the command writes its JUnit report (default: none; or put {junit} in the command)",
    )
    parser.add_argument(
        "--timeout",
        metavar="DURATION",
        type=parse_timeout,
        default=None,
        help="wall-clock limit above 0 for the whole shard, e.g. 30m (default: none)",
    )
    parser.add_argument(
        "--grace",
        metavar="DURATION",
        type=parse_duration,
        default=10.0,
        help="wait after the graceful signal before SIGKILL; 0 kills at once (default: 10s)",
    )
    parser.add_argument(
        "--signal",
        metavar="SIGNAL",
        dest="graceful_signal",
        type=parse_signal,
        default=int(signal.SIGINT),
        help="graceful signal at the deadline; pytest writes its report on SIGINT, not SIGTERM (default: SIGINT)",
    )
    parser.add_argument(
        "--retries", metavar="K", type=int, default=0, help="re-run only the failed tests up to K times (default: 0)"
    )
    parser.add_argument(
        "--max-rerun-failures",
        metavar="M",
        type=int,
        default=10,
        help="skip re-runs above this many failures (default: 10)",
    )
    add_flaky_result(parser)
    parser.add_argument(
        "--max-test-seconds",
        metavar="S",
        type=parse_seconds,
        default=None,
        help="a passing test slower than S seconds (above 0) fails with the reason (default: no budget)",
    )
    parser.add_argument(
        "--accept-exit-code",
        action="store_true",
        help="without a test report, trust the exit code (the outcome says accounting was impossible) (default: off)",
    )
    parser.add_argument(
        "--leak-timeout",
        metavar="DURATION",
        type=parse_duration,
        default=0.5,
        help="how long processes may outlive the command before they are reported and killed (default: 500ms)",
    )
    cover = parser.add_mutually_exclusive_group()
    cover.add_argument(
        "--coverage",
        dest="coverage",
        action="store_true",
        default=None,
        help="measure coverage into the shard folder's coverage/ (coverage.py for pytest and `python -m`, "
        "V8 for node); needs ci-shards[coverage] for Python (default: the config key `coverage`, else off)",
    )
    cover.add_argument("--no-coverage", dest="coverage", action="store_false", help="no coverage (default: off)")
    parser.add_argument(
        "--coverage-map",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --coverage under pytest: record which test files executed each line (default: on)",
    )
    parser.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        help="after --: the test command; {items}, {items_file} and {junit} are expanded (default: none)",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = subparsers.add_parser(
        "run",
        help="run one shard of a plan under a hard limit and write its artifact folder",
        description="Run one shard's items: CMD ARGS... {items} after --, or --pytest. Exit 0 when the shard "
        "passed (or is empty), 1 otherwise, 2 on bad usage.",
    )
    run.add_argument("--plan", type=Path, default=Path("plan.json"), help="the plan file (default: plan.json)")
    run.add_argument("--shard", required=True, help="I/N (1-based) or auto from the CI's variables (required)")
    live = run.add_mutually_exclusive_group()
    live.add_argument(
        "--live",
        dest="live",
        action="store_true",
        default=None,
        help="stream output to the console, each batch and re-run in a ::group:: on GitHub "
        "(default: on when stderr is a terminal or CI/GITHUB_ACTIONS is set)",
    )
    live.add_argument(
        "--no-live", dest="live", action="store_false", help="only spool output to output.log (default: off)"
    )
    run.add_argument(
        "--allow-empty",
        action="store_true",
        help="a plan with no items passes; without it its shards are written as empty and run exits 1"
        " (default: config 'allow-empty', else off)",
    )
    add_execution_options(run)
    run.set_defaults(handler=_run_handler)
    register_local(subparsers)


# the first word of a pytest-split habit (`-- pytest tests/`, `-- python -m pytest`): with --pytest,
# ci-shards runs pytest itself and the words after -- are pytest's options and paths
_RUNNER_WORD = re.compile(r"(py\.?test|python[\d.]*)(\.exe)?")


def check_pytest_words(words: Sequence[str], cwd: Path | None = None) -> None:
    """Refuse ``--pytest -- pytest tests/``: pytest would take ``pytest`` for a path and fail, or worse.
    A folder of that name in ``cwd`` (a suite under ``pytest/``) is a path, and fine."""
    if words and _RUNNER_WORD.fullmatch(Path(words[0]).name) and not (cwd is not None and (cwd / words[0]).is_dir()):
        msg = (
            f"--pytest runs pytest itself; the words after -- are pytest options and paths, so {words[0]!r} is"
            " misuse: drop it (e.g. `--pytest -- tests/ -x`), or leave out --pytest to run a command of your own"
        )
        raise UsageError(msg)


def command_args(raw: Sequence[str]) -> list[str]:
    args = list(raw)
    return args[1:] if args[:1] == ["--"] else args


def _names_path(word: str, cwd: Path) -> bool:
    return not word.startswith("-") and (cwd / word.split("::", 1)[0]).exists()


def pytest_roots(raw: Sequence[str], cwd: Path) -> list[str]:
    """The paths among the words after ``--`` (which the plugin drops from every shard): the run's test roots,
    which the plan's unowned shard collects to find test files no shard owns."""
    return [a for a in command_args(raw) if _names_path(a, cwd)]


def _run_handler(args: argparse.Namespace) -> int:
    from ci_shards.run.process import CancelToken  # noqa: PLC0415
    from ci_shards.run.runner import RunOptions, cancel_on_signals, run_shard  # noqa: PLC0415

    env = dict(os.environ)
    cwd = Path.cwd()
    index, total = resolve_shard(args.shard, env)
    plan = load_plan(args.plan)
    if plan.total != total:
        msg = f"--shard {index}/{total}: {args.plan} has {plan.total} shards"
        raise UsageError(msg)
    console = console_for(env)
    if args.pytest:
        check_pytest_words(command_args(args.command), cwd)
    command = command_args(args.command)
    # live by default on a terminal and in CI (where a log nobody watches live is read afterwards)
    live = args.live if args.live is not None else (sys.stderr.isatty() or is_ci(env))
    options = RunOptions(
        plan=plan,
        plan_path=args.plan,
        shard_index=index,
        out=args.out,
        command=tuple(command),
        pytest=args.pytest,
        junit=args.junit,
        timeout=args.timeout,
        grace=args.grace,
        graceful_signal=args.graceful_signal,
        retries=args.retries,
        max_rerun_failures=args.max_rerun_failures,
        flaky_result=FlakyResult(args.flaky_result),
        max_test_seconds=args.max_test_seconds,
        accept_exit_code=args.accept_exit_code,
        live=live,
        leak_timeout=args.leak_timeout,
        cwd=cwd,
        env=env,
        pytest_roots=tuple(pytest_roots(args.command, cwd)) if args.pytest else (),
        coverage=coverage_request(args, cwd),
    )
    if args.retries < 0 or args.max_rerun_failures < 0:
        msg = "--retries and --max-rerun-failures must be 0 or more"
        raise UsageError(msg)
    cancel = CancelToken()
    with cancel_on_signals(cancel):
        outcome = run_shard(options, console=console, cancel=cancel)
    from ci_shards.commands.plan import check_not_empty  # noqa: PLC0415 - cycle (above)

    # after the folder is written: aggregate fails the same empty plan, and says so in its report
    check_not_empty(plan, allowed=allow_empty(args.allow_empty, cwd), what=str(args.plan))
    return EXIT_OK if outcome.status.is_success else EXIT_FAILED


def coverage_request(args: argparse.Namespace, cwd: Path) -> CoverageRequest | None:
    """``--coverage`` / ``--no-coverage``, else the config key ``coverage``."""
    from ci_shards.coverage.collect import CoverageRequest  # noqa: PLC0415

    enabled = args.coverage
    if enabled is None:
        enabled = bool(load_config(cwd).coverage)
    return CoverageRequest(map=args.coverage_map) if enabled else None


def _local_handler(args: argparse.Namespace) -> int:
    from ci_shards.local import (  # noqa: PLC0415
        ReportFiles,
        aggregate_results,
        auto_jobs,
        available_memory,
        cores,
        run_argv,
        run_local,
    )
    from ci_shards.run.process import CancelToken  # noqa: PLC0415
    from ci_shards.run.runner import cancel_on_signals  # noqa: PLC0415

    env = dict(os.environ)
    cwd = Path.cwd()
    console = console_for(env)
    raw = command_args(args.command)
    if args.pytest:
        check_pytest_words(raw, cwd)
    if not args.pytest and not raw:
        msg = "no command given: add `-- CMD ARGS... {items}` or use --pytest"
        raise UsageError(msg)
    if (args.fail_under is not None or args.coverage_base is not None) and coverage_request(args, cwd) is None:
        msg = "--fail-under and --coverage-base need --coverage (or the config key coverage: true)"
        raise UsageError(msg)
    from ci_shards.commands.plan import check_not_empty, plan_from_options  # noqa: PLC0415 - cycle (above)

    plan = plan_from_options(args, env=env, cwd=cwd, pytest_args=raw if args.pytest else None)
    plan_path = args.out / "plan.json"
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        plan_path.write_text(plan.dumps(), encoding="utf-8")
    except OSError as err:
        raise InputError(args.out, f"cannot write the results folder (--out): {err.strerror or err}") from None
    allowed = allow_empty(args.allow_empty, cwd, args.config)
    check_not_empty(plan, allowed=allowed)  # nothing to run: say so before starting anything
    command = raw  # with --pytest, the plugin drops the arguments that select tests (and says so)
    if args.jobs == "auto":
        jobs = auto_jobs(plan.total, cores=cores(), memory=available_memory(), job_memory=args.job_memory)
    elif args.jobs.isdigit() and int(args.jobs) > 0:
        jobs = min(int(args.jobs), plan.total)
    else:
        msg = f"--jobs {args.jobs!r}: expected auto or a positive number"
        raise UsageError(msg)
    console.line(
        f"ci-shards local: {len(plan.items)} items in {plan.total} shards, {jobs} at a time, "
        f"estimated {fmt_seconds(plan.estimated_makespan)} per shard at most; results in {args.out}"
    )
    cancel = CancelToken()
    with cancel_on_signals(cancel):
        never = run_local(
            plan=plan,
            plan_path=plan_path,
            jobs=jobs,
            argv_for=lambda i: run_argv(args, plan_path, i, plan.total, command),
            out=args.out,
            console=console,
            cancel=cancel,
        )
    if never:
        console.warning(f"never started (interrupted): shards {', '.join(map(str, never))}")
    files = ReportFiles(
        merged_junit=args.merged_junit,
        summary=args.summary,
        failures=args.failures,
        timings_out=args.timings_out,
        timings_variant=args.variant or "",  # the variant the plan read (--variant), written back
    )
    result = aggregate_results(
        plan, args.out, flaky_result=args.flaky_result, allow_empty=allowed, files=files, console=console
    )
    if result.failures:
        console.untrusted(result.failures)  # test output: on GitHub it cannot issue workflow commands
    sys.stdout.write(result.table)
    sys.stdout.flush()
    code = max(result.exit_code, _local_coverage(args, plan, cwd, env, console))
    return EXIT_INTERRUPTED if cancel.cancelled else code


def _local_coverage(args: argparse.Namespace, plan: Plan, cwd: Path, env: dict[str, str], console: Console) -> int:
    """``local --coverage``: fold every shard's coverage into the results folder (docs/coverage.md)."""
    if coverage_request(args, cwd) is None:
        return EXIT_OK
    from ci_shards.coverage.publish import publish_reported  # noqa: PLC0415

    _section, code = publish_reported(
        plan,
        [args.out],
        out=args.out,
        root=cwd,
        fail_under=args.fail_under,
        base=args.coverage_base,
        env=env,
        console=console,
    )
    return code


def register_local(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    local = subparsers.add_parser(
        "local",
        help="plan, run every shard here as parallel processes, and print the verdict",
        description="Plan the suite, run every shard on this machine (each a real `ci-shards run`), then aggregate. "
        "Ctrl-C stops every shard and still reports what finished; a second Ctrl-C kills them.",
    )
    from ci_shards.commands.plan import add_allow_empty, add_plan_options  # noqa: PLC0415 - cycle (above)

    add_plan_options(local)
    add_allow_empty(local)
    local.add_argument(
        "--jobs",
        metavar="N|auto",
        default="auto",
        help="shards at once: N or auto = min(cores, memory/--job-memory, shards) (default: auto)",
    )
    local.add_argument(
        "--job-memory",
        metavar="SIZE",
        type=parse_size,
        default=DEFAULT_JOB_MEMORY,
        help="memory budget per job for --jobs auto (default: 1G)",
    )
    add_execution_options(local, pytest_flag=False)
    add_coverage_options(local, out=False)

    # what `aggregate` writes; --junit already says where each shard's command writes its report
    reports = local.add_argument_group("reports (as aggregate writes them)")
    for flag, what in (
        ("--merged-junit", "write the merged JUnit XML to FILE"),
        ("--summary", "write the Markdown summary to FILE"),
        ("--failures", "write every failure record to FILE as JSON lines"),
        ("--timings-out", "fold measured durations into the timings file FILE"),
    ):
        reports.add_argument(flag, type=Path, metavar="FILE", help=f"{what} (default: not written)")
    local.set_defaults(handler=_local_handler)
