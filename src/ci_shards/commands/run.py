"""``ci-shards run`` (one shard of a plan: ``run.runner.run_shard``) and ``ci-shards local`` (plan, run every shard
here, aggregate: ``local.run_locally``): the flags become the typed options, the stage runs."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ci_shards.common.console import console_for, is_ci
from ci_shards.common.errors import EXIT_FAILED, EXIT_OK, UsageError
from ci_shards.common.interpreter import default_python
from ci_shards.judge import check_not_empty
from ci_shards.model.planfile import load_plan
from ci_shards.options.config import load_config
from ci_shards.options.typed import local_options, run_options

# re-exported: the value parsers moved to options.values with the declarations that use them
from ci_shards.options.values import parse_duration, parse_seconds, parse_signal, parse_size, parse_timeout
from ci_shards.plan.matrix import resolve_shard
from ci_shards.plan.pytest_args import check_pytest_words
from ci_shards.run.settings import RunSettings

if TYPE_CHECKING:
    from ci_shards.coverage.collect import CoverageRequest

# Imported inside the handlers, and only these (docs/benchmarks.md, "Start-up time per subcommand"):
# the runner (run.runner, run.process: ~25 ms), ci_shards.local and coverage (coverage.py: ~15-30 ms),
# which every other subcommand would otherwise pay at start-up.

__all__ = ["parse_duration", "parse_seconds", "parse_signal", "parse_size", "parse_timeout"]


def command_args(raw: Sequence[str]) -> list[str]:
    args = list(raw)
    return args[1:] if args[:1] == ["--"] else args


def run_handler(args: argparse.Namespace) -> int:
    from ci_shards.run.process import CancelToken  # noqa: PLC0415
    from ci_shards.run.runner import RunOptions as RunnerOptions  # noqa: PLC0415
    from ci_shards.run.runner import cancel_on_signals, run_shard  # noqa: PLC0415

    env = dict(os.environ)
    cwd = Path.cwd()
    index, total = resolve_shard(args.shard, env)
    plan = load_plan(args.plan)
    if plan.total != total:
        msg = f"--shard {index}/{total}: {args.plan} has {plan.total} shards"
        raise UsageError(msg)
    console = console_for(env)
    options = run_options(vars(args), load_config(cwd))
    if options.pytest:
        check_pytest_words(options.command, cwd)
    # live by default on a terminal and in CI (where a log nobody watches live is read afterwards)
    live = args.live if args.live is not None else (sys.stderr.isatty() or is_ci(env))
    runner_options = RunnerOptions(
        plan=plan,
        plan_path=args.plan,
        shard_index=index,
        settings=options,
        live=live,
        cwd=cwd,
        env=env,
        python=default_python(options.python, env),
        coverage=coverage_request(options),
    )
    if options.retries < 0 or options.max_rerun_failures < 0:
        msg = "--retries and --max-rerun-failures must be 0 or more"
        raise UsageError(msg)
    cancel = CancelToken()
    with cancel_on_signals(cancel):
        outcome = run_shard(runner_options, console=console, cancel=cancel)
    # after the folder is written: aggregate fails the same empty plan, and says so in its report
    check_not_empty(plan, allowed=options.allow_empty, what=str(args.plan))
    return EXIT_OK if outcome.status.is_success else EXIT_FAILED


def coverage_request(options: RunSettings) -> CoverageRequest | None:
    """``--coverage`` / ``--no-coverage``, else the config key ``coverage``."""
    from ci_shards.coverage.collect import CoverageRequest  # noqa: PLC0415

    return CoverageRequest(map=options.coverage_map, per=options.coverage_map_per) if options.coverage else None


def local_handler(args: argparse.Namespace) -> int:
    from ci_shards.local import run_locally  # noqa: PLC0415

    options = local_options(vars(args), load_config(Path.cwd(), args.config))
    return run_locally(options, env=dict(os.environ), cwd=Path.cwd())
