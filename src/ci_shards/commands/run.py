"""``ci-shards run`` (one shard of a plan) and ``ci-shards local`` (plan, run every shard here, aggregate)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ci_shards.common import outfile
from ci_shards.common.console import Console, console_for, fmt_seconds, is_ci, plural
from ci_shards.common.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, InputError, UsageError
from ci_shards.common.interpreter import default_python, probe
from ci_shards.model.plan import Plan
from ci_shards.model.planfile import load_plan
from ci_shards.options.config import load_config
from ci_shards.options.typed import LocalOptions, local_options, run_options

# re-exported: the value parsers moved to options.values with the declarations that use them
from ci_shards.options.values import parse_duration, parse_seconds, parse_signal, parse_size, parse_timeout
from ci_shards.plan.matrix import resolve_shard
from ci_shards.run.settings import RunSettings

if TYPE_CHECKING:
    from ci_shards.coverage.collect import CoverageRequest

# Imported inside the handlers, and only these (docs/benchmarks.md, "Start-up time per subcommand"):
# the runner (run.runner, run.process: ~25 ms), ci_shards.local and coverage (coverage.py: ~15-30 ms),
# which every other subcommand would otherwise pay at start-up; and commands.plan, which imports this
# module (check_pytest_words), so a top-level import would be a cycle.

__all__ = ["parse_duration", "parse_seconds", "parse_signal", "parse_size", "parse_timeout"]


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
    from ci_shards.commands.plan import check_not_empty  # noqa: PLC0415 - cycle (above)

    # after the folder is written: aggregate fails the same empty plan, and says so in its report
    check_not_empty(plan, allowed=options.allow_empty, what=str(args.plan))
    return EXIT_OK if outcome.status.is_success else EXIT_FAILED


def coverage_request(options: RunSettings) -> CoverageRequest | None:
    """``--coverage`` / ``--no-coverage``, else the config key ``coverage``."""
    from ci_shards.coverage.collect import CoverageRequest  # noqa: PLC0415

    return CoverageRequest(map=options.coverage_map) if options.coverage else None


def local_handler(args: argparse.Namespace) -> int:
    from ci_shards.local import (  # noqa: PLC0415
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
    options = local_options(vars(args), load_config(cwd, args.config))
    raw = list(options.run.command)
    if options.run.pytest:
        check_pytest_words(raw, cwd)
        options = _with_python(options, env)
    if not options.run.pytest and not raw:
        msg = "no command given: add `-- CMD ARGS... {items}` or use --pytest"
        raise UsageError(msg)
    if (options.fail_under is not None or options.coverage_base is not None) and not options.run.coverage:
        msg = "--fail-under and --coverage-base need --coverage (or the config key coverage: true)"
        raise UsageError(msg)
    from ci_shards.commands.plan import check_not_empty, plan_from_options  # noqa: PLC0415 - cycle (above)

    plan = plan_from_options(
        options.plan, env=env, cwd=cwd, pytest_args=raw if options.run.pytest else None, cap_to_items=True
    )
    out = options.run.out
    plan_path = out / "plan.json"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(out, f"cannot write the results folder (--out): {err.strerror or err}") from None
    outfile.write_atomic(plan_path, plan.dumps())
    allowed = options.plan.allow_empty
    check_not_empty(plan, allowed=allowed)  # nothing to run: say so before starting anything
    command = raw  # with --pytest, the plugin drops the arguments that select tests (and says so)
    if options.jobs == "auto":
        jobs = auto_jobs(plan.total, cores=cores(), memory=available_memory(), job_memory=options.job_memory)
    elif options.jobs.isdigit() and int(options.jobs) > 0:
        jobs = min(int(options.jobs), plan.total)
    else:
        msg = f"--jobs {options.jobs!r}: expected auto or a positive number"
        raise UsageError(msg)
    console.line(
        f"ci-shards local: {plural(len(plan.items), 'item')} in {plural(plan.total, 'shard')}, {jobs} at a time, "
        f"estimated {fmt_seconds(plan.estimated_makespan)} per shard at most; results in {out}"
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
    sys.stdout.write(result.table)
    sys.stdout.flush()
    code = max(result.exit_code, _local_coverage(options, plan, cwd, env, console))
    return EXIT_INTERRUPTED if cancel.cancelled else code


def _with_python(options: LocalOptions, env: Mapping[str, str]) -> LocalOptions:
    """The one interpreter of the collection and every shard, checked once here (no pytest: exit 2 before
    anything starts, not once per shard) and passed to each ``run`` as ``--python``."""
    python = probe(default_python(options.run.python, env), env).path
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
