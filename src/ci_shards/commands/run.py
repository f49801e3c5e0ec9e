"""``ci-shards run`` (one shard of a plan) and ``ci-shards local`` (plan, run every shard here, aggregate)."""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from ci_shards.classify import FlakyResult
from ci_shards.console import console_for
from ci_shards.errors import EXIT_FAILED, EXIT_OK, UsageError
from ci_shards.model import RESULTS_DIR, parse_shard_spec
from ci_shards.process import CancelToken
from ci_shards.runner import RunOptions, cancel_on_signals, load_plan, run_shard

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(text: str) -> float:
    """``30m``, ``10s``, ``1.5h``, ``500ms`` or plain seconds."""
    match = _DURATION.match(text)
    if not match:
        msg = f"{text!r} is not a duration (e.g. 30m, 10s, 1.5h, 500ms)"
        raise argparse.ArgumentTypeError(msg)
    return float(match.group(1)) * _UNITS[match.group(2)]


def parse_signal(text: str) -> int:
    name = text.upper()
    if name.isdigit():
        return int(name)
    try:
        return int(signal.Signals[name if name.startswith("SIG") else "SIG" + name])
    except KeyError:
        msg = f"{text!r} is not a signal name (e.g. SIGINT, SIGTERM)"
        raise argparse.ArgumentTypeError(msg) from None


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
        "arguments after -- are extra pytest options (paths among them are dropped) (default: off)",
    )
    _add_run_options(parser)


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--junit",
        metavar="PATH|GLOB",
        default=None,
        help="where the command writes its JUnit report (default: {junit})",
    )
    parser.add_argument(
        "--timeout",
        type=parse_duration,
        default=None,
        help="wall-clock limit for the whole shard, e.g. 30m (default: none)",
    )
    parser.add_argument(
        "--grace",
        type=parse_duration,
        default=10.0,
        help="wait after the graceful signal before SIGKILL (default: 10s)",
    )
    parser.add_argument(
        "--signal",
        dest="graceful_signal",
        type=parse_signal,
        default=int(signal.SIGINT),
        help="graceful signal at the deadline; pytest writes its report on SIGINT, not SIGTERM (default: SIGINT)",
    )
    parser.add_argument(
        "--retries", type=int, default=0, help="re-run only the failed tests up to K times (default: 0)"
    )
    parser.add_argument(
        "--max-rerun-failures", type=int, default=10, help="skip re-runs above this many failures (default: 10)"
    )
    parser.add_argument(
        "--flaky-result",
        choices=[f.value for f in FlakyResult],
        default=FlakyResult.PASS.value,
        help="whether a failed-then-passed test lets the shard pass (default: pass; always reported)",
    )
    parser.add_argument(
        "--max-test-seconds",
        type=float,
        default=None,
        help="a passing test slower than this fails with the reason (default: no budget)",
    )
    parser.add_argument(
        "--accept-exit-code",
        action="store_true",
        help="without a test report, trust the exit code (the outcome says accounting was impossible) (default: off)",
    )
    parser.add_argument(
        "--leak-timeout",
        type=parse_duration,
        default=0.5,
        help="how long processes may outlive the command before they are reported and killed (default: 500ms)",
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
        help="stream output to the console (default: on when stderr is a terminal)",
    )
    live.add_argument("--no-live", dest="live", action="store_false", help="only spool output to output.log")
    add_execution_options(run)
    run.set_defaults(handler=_run_handler)
    from ci_shards.local import register_local  # noqa: PLC0415 (avoids an import cycle at module load)

    register_local(subparsers)


def command_args(raw: Sequence[str]) -> list[str]:
    args = list(raw)
    return args[1:] if args[:1] == ["--"] else args


def pytest_extra_args(raw: Sequence[str], cwd: Path) -> list[str]:
    """Options for pytest from the words after ``--``: paths are dropped (the shard's files replace them)."""
    return [a for a in command_args(raw) if a.startswith("-") or not (cwd / a.split("::", 1)[0]).exists()]


def resolve_shard(spec: str, env: Mapping[str, str]) -> tuple[int, int]:
    if spec == "auto":
        try:
            from ci_shards.matrix import resolve_shard as resolve  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415
        except ImportError:
            return _auto_shard(env)
        return resolve(spec, env)  # type: ignore[no-any-return]
    try:
        return parse_shard_spec(spec)
    except ValueError as err:
        msg = f"--shard: {err}"
        raise UsageError(msg) from None


def _auto_shard(env: Mapping[str, str]) -> tuple[int, int]:
    """The shard from the CI's own variables (GitLab parallel, CircleCI, Buildkite, or CI_SHARDS_SHARD)."""
    if env.get("CI_SHARDS_SHARD"):
        return resolve_shard(env["CI_SHARDS_SHARD"], env)
    pairs = (
        ("CI_NODE_INDEX", "CI_NODE_TOTAL", 0),
        ("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 1),
        ("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 1),
    )
    for index_var, total_var, offset in pairs:
        if env.get(index_var, "").isdigit() and env.get(total_var, "").isdigit():
            return resolve_shard(f"{int(env[index_var]) + offset}/{env[total_var]}", env)
    msg = "--shard auto: no CI_SHARDS_SHARD, CI_NODE_INDEX/TOTAL, CIRCLE_NODE_* or BUILDKITE_PARALLEL_* variables"
    raise UsageError(msg)


def _run_handler(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    cwd = Path.cwd()
    index, total = resolve_shard(args.shard, env)
    plan = load_plan(args.plan)
    if plan.total != total:
        msg = f"--shard {index}/{total}: {args.plan} has {plan.total} shards"
        raise UsageError(msg)
    console = console_for(env)
    command = pytest_extra_args(args.command, cwd) if args.pytest else command_args(args.command)
    live = args.live if args.live is not None else sys.stderr.isatty()
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
    )
    if args.retries < 0 or args.max_rerun_failures < 0:
        msg = "--retries and --max-rerun-failures must be 0 or more"
        raise UsageError(msg)
    cancel = CancelToken()
    with cancel_on_signals(cancel):
        outcome = run_shard(options, console=console, cancel=cancel)
    return EXIT_OK if outcome.status.is_success else EXIT_FAILED
