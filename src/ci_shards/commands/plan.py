"""Subcommands of the plan stage: ``plan``, ``matrix``, ``timings import``, ``timings merge``.

``add_plan_options`` and ``plan_from_options`` are shared with ``ci-shards local`` (the run stage):
every way of choosing items, timings and shard counts is defined once, here.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ci_shards import outfile
from ci_shards.commands import timings as timings_commands
from ci_shards.commands.run import check_pytest_words
from ci_shards.config import MAX_WEIGHT, Config, allow_empty, load_config
from ci_shards.console import console_for
from ci_shards.errors import InputError, TestsFailed, UsageError
from ci_shards.judge import empty_plan_message
from ci_shards.model import Granularity, Plan, rfc3339
from ci_shards.plan import matrix as matrix_mod
from ci_shards.plan.choose import choose_shards
from ci_shards.plan.collect import glob_items, read_items
from ci_shards.plan.discover import discover_items, whole_files_as_items
from ci_shards.plan.estimates import match_timings, measured_ratio, rebase_keys
from ci_shards.plan.packing import STRATEGIES
from ci_shards.plan.planner import plan_items
from ci_shards.plan.pytest_collect import collect_pytest, portable_rootdir
from ci_shards.plan.render import render_plan
from ci_shards.planfile import load_plan
from ci_shards.select.apply import select_items
from ci_shards.select.decide import Selection, shrink_shards
from ci_shards.select.settings import SelectMode
from ci_shards.timings import TimingsStore, load_timings, merge_stores

DEFAULT_MAX_SHARDS = matrix_mod.GITHUB_MATRIX_MAX


def add_plan_options(parser: argparse.ArgumentParser) -> None:
    """Every option that decides a plan. Defaults are None here so that config values can fill them."""
    items = parser.add_argument_group("items (at least one source)")
    items.add_argument(
        "--items", action="append", metavar="FILE|-", help="file with one item per line, or - for stdin (default: none)"
    )
    items.add_argument(
        "--glob",
        action="extend",
        nargs="+",
        metavar="PATTERN",
        help="files matching these globs are the items, ** recurses (default: none)",
    )
    if "--pytest" not in parser._option_string_actions:  # a caller may define it first, same dest and meaning
        items.add_argument(
            "--pytest",
            action="store_true",
            help="collect node ids with 'python -m pytest --collect-only -q'; pytest arguments follow --"
            " (default: off)",
        )
    items.add_argument(
        "--from-timings",
        action="store_true",
        help="the items are the keys of the --durations files; with --glob, new files beside them and timings of"
        " deleted files dropped (default: off)",
    )
    items.add_argument(
        "--discover",
        action="store_true",
        help="the test files pytest's own settings (testpaths, python_files) find on disk, merged with the timings:"
        " no test dependencies needed; path arguments after -- narrow it (default: off)",
    )
    timing = parser.add_argument_group("timings")
    timing.add_argument(
        "--durations",
        action="append",
        metavar="FILE",
        help="timings: pytest-split .test_durations, JUnit XML or a ci-shards store; repeatable, and per item"
        " the first file that has it wins (default: config 'timings', else none)",
    )
    timing.add_argument(
        "--cached-durations",
        action="append",
        metavar="FILE",
        help="timings restored from a CI cache, read before --durations; a missing or unreadable file is a warning"
        " and is ignored, so a corrupt cache never blocks planning; repeatable (default: none)",
    )
    timing.add_argument(
        "--durations-root",
        metavar="DIR",
        help="the folder the timings' ids are relative to, from the working directory (e.g. the package folder"
        " pytest ran in when they were recorded); they are rebased onto the plan's ids (default: the plan's"
        " rootdir)",
    )
    timing.add_argument(
        "--allow-unmatched-timings",
        action="store_true",
        help="plan even when under half of the items match a timing, by path or path suffix (default: off: exit 2)",
    )
    timing.add_argument(
        "--variant",
        help="timings variant key, e.g. linux-py3.12; falls back to other variants (default: config, else none)",
    )
    shards = parser.add_argument_group("shards")
    shards.add_argument(
        "--shards",
        metavar="N|auto",
        help="number of shards, or auto with --target-seconds"
        " (default: config, else auto when --target-seconds is given)",
    )
    shards.add_argument(
        "--target-seconds",
        type=float,
        metavar="S",
        help="for --shards auto: the slowest shard plus overhead should fit this (default: config)",
    )
    shards.add_argument(
        "--shard-overhead",
        type=float,
        metavar="S",
        help="for --shards auto: setup seconds every shard pays (default: config, else 0)",
    )
    shards.add_argument(
        "--max-shards",
        type=int,
        metavar="M",
        help=f"for --shards auto: at most this many"
        f" (default: config, else {DEFAULT_MAX_SHARDS}, GitHub's matrix limit)",
    )
    balance = parser.add_argument_group("balance")
    balance.add_argument(
        "--granularity",
        choices=[g.value for g in Granularity],
        help="test, file, or auto: files whole unless balance needs a cut (default: config, else auto)",
    )
    balance.add_argument(
        "--keep-together",
        action="append",
        metavar="RULE",
        help="never split: 'class' (file::Class) or a glob whose matches stay together; repeatable"
        " (default: config, else none)",
    )
    balance.add_argument(
        "--weight",
        action="append",
        metavar="PATTERN=FACTOR",
        help="multiply the estimate of items matching PATTERN; repeatable (default: config 'weights', else none)",
    )
    balance.add_argument(
        "--max-items-per-shard",
        type=int,
        metavar="N",
        help="at most N items per shard (default: config, else no limit)",
    )
    balance.add_argument(
        "--cut-cost",
        type=float,
        metavar="S",
        help="setup seconds a file repeats in each extra shard it is cut into (default: config, else 0)",
    )
    balance.add_argument(
        "--strategy", choices=sorted(STRATEGIES), help="packing strategy (default: config, else balanced)"
    )
    parser.add_argument(
        "--config", metavar="FILE", help="config file (default: ci-shards.yml, else [tool.ci-shards] in pyproject.toml)"
    )
    select = parser.add_argument_group("change-based selection (docs/selection.md)")
    select.add_argument(
        "--select",
        choices=[m.value for m in SelectMode],
        help="changed: plan only the items the change can break; shadow: plan everything and record what would"
        " have been skipped; off (default: config 'select', else off)",
    )
    select.add_argument(
        "--base",
        metavar="REF",
        help="the commit the change is diffed against (default: the CI's base, else the merge base with the"
        " default branch)",
    )
    select.add_argument(
        "--select-coverage",
        metavar="FILE",
        help="coverage.json of a full base-branch run: its test-file map joins the selection (default: config"
        " selection.coverage, else none)",
    )
    select.add_argument(
        "--select-failures",
        metavar="FILE",
        help="failures.jsonl (or test ids, one a line) of the last base-branch run: those always run (default:"
        " config selection.failures, else none)",
    )


ALLOW_EMPTY_HELP = (
    "let a plan with no items (or a run in which no test ran) pass; without it that is exit 1"
    " (default: config 'allow-empty', else off)"
)


def add_allow_empty(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-empty", action="store_true", help=ALLOW_EMPTY_HELP)


def check_not_empty(plan: Plan, *, allowed: bool, what: str = "the plan") -> None:
    """Exit 1 (``TestsFailed``) with one line when the plan has no items, unless ``--allow-empty``:
    an empty suite must never pass silently (call it after every output was written)."""
    if not plan.items and not plan.skipped_by_diff and not allowed:
        raise TestsFailed(empty_plan_message(what))


def _created_at(env: Mapping[str, str]) -> str:
    """Now in RFC 3339, or SOURCE_DATE_EPOCH when set (reproducible builds convention)."""
    epoch = env.get("SOURCE_DATE_EPOCH", "")
    when = (
        dt.datetime.fromtimestamp(int(epoch), dt.timezone.utc) if epoch.isdigit() else dt.datetime.now(dt.timezone.utc)
    )
    return rfc3339(when)


def _weights(raw: Sequence[str] | None, config: Config) -> dict[str, float]:
    weights = dict(config.weights)
    for entry in raw or ():
        pattern, sep, factor = entry.rpartition("=")
        try:
            value = float(factor)
        except ValueError:
            value = -1.0
        if not sep or not pattern or not 0 < value <= MAX_WEIGHT:  # nan fails both comparisons
            msg = f"--weight {entry!r}: expected PATTERN=FACTOR with a factor above 0 and at most {MAX_WEIGHT:g}"
            raise UsageError(msg)
        weights[pattern] = value
    return weights


def _pick(flag: Any, configured: Any, default: Any = None) -> Any:
    return flag if flag is not None else configured if configured is not None else default


def load_durations(
    paths: Sequence[str], *, cwd: Path, env: Mapping[str, str], required: bool = False, explicit: bool = True
) -> list[TimingsStore]:
    """Read the timings files, in order. A ``--durations`` file (``explicit``) must exist and hold at
    least one usable timing: a typo (``.test_duration``) must not silently plan on guesses. Only the
    config's ``timings`` (a store aggregate writes, absent on a fresh clone) may be missing, with a
    warning, unless the items come from it (``required``); a broken file is always an error."""
    console = console_for(env)
    stores = []
    for path in paths:
        if not (cwd / path).exists():
            if explicit or required:
                hint = " (--cached-durations is the flag for a file that may be missing)" if explicit else ""
                raise InputError(path, f"no such timings file{hint}")
            console.warning(f"{path}: no timings file yet; every item gets an estimate (see the plan's notes)")
            continue
        store = load_timings(cwd / path)
        if explicit and not store.estimates():
            raise InputError(path, "no usable timings in this file (no item with a duration)")
        stores.append(store)
    for warning in merge_stores(stores).warnings:
        console.warning(warning)
    return stores


def load_cached_durations(paths: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> list[TimingsStore]:
    """Read timings restored from a cache: a missing or unreadable file is one warning and is left
    out (the next aggregate replaces it), never an error, or one corrupt cache entry would block
    every later run's plan while the cache keeps restoring it."""
    console = console_for(env)
    stores = []
    for path in paths:
        try:
            stores.append(load_timings(cwd / path))
        except InputError as err:
            missing = not (cwd / path).exists()
            console.warning(f"{err}; {'no cached timings yet' if missing else 'the cached timings are ignored'}")
    for warning in merge_stores(stores).warnings:
        console.warning(warning)
    return stores


def first_estimates(stores: Sequence[TimingsStore], variant: str | None) -> dict[str, float]:
    """Per item, the estimate of the first store that has one: e.g. the fresh cached store first,
    a committed ``.test_durations`` only for items the store has not measured yet."""
    estimates: dict[str, float] = {}
    for store in stores:
        for item, seconds in store.estimates(variant).items():
            estimates.setdefault(item, seconds)
    return estimates


def shard_overhead(
    flag: float | None, configured: float | None, stores: Sequence[TimingsStore], variant: str | None
) -> tuple[float, str]:
    """(seconds, where they came from): ``--shard-overhead``, else the config, else what aggregate
    learned into the first timings store that has it (median of recent runs), else 0."""
    if flag is not None:
        return flag, "--shard-overhead"
    if configured is not None:
        return configured, "config shard-overhead"
    for store in stores:
        learned = store.overhead_estimate(variant)
        if learned is not None:
            seconds, runs = learned
            return seconds, f"learned: median of {runs} run{'s' if runs != 1 else ''}"
    return 0.0, ""


def plan_from_options(
    args: argparse.Namespace,
    *,
    env: Mapping[str, str],
    cwd: Path,
    pytest_args: Sequence[str] | None = None,
) -> Plan:
    """Load config, collect the items, read the timings and plan (``created_at`` filled here)."""
    config = load_config(cwd, args.config)
    durations_paths = args.durations or ([config.timings] if config.timings else [])
    cached_paths = getattr(args, "cached_durations", None) or []
    stores = load_cached_durations(cached_paths, cwd=cwd, env=env)  # the cached store first: fresher
    required = args.from_timings and not cached_paths
    stores += load_durations(durations_paths, cwd=cwd, env=env, required=required, explicit=bool(args.durations))
    variant = _pick(args.variant, config.variant)
    estimates = first_estimates(stores, variant)

    items: list[str] = []
    sources = 0
    rootdir: str | None = None
    discovering = getattr(args, "discover", False)
    # files on disk merged with the timings: --discover, or --glob beside --from-timings
    discovery = None
    discovery_notes: list[str] = []
    for source in args.items or ():
        items += read_items(source, cwd=cwd)
        sources += 1
    if args.glob and not (discovering or args.from_timings):
        items += glob_items(args.glob, cwd=cwd)
        sources += 1
    leftover = getattr(args, "pytest_args", None) if pytest_args is None else None
    if leftover and not (getattr(args, "pytest", False) or discovering):
        msg = f"unexpected arguments {' '.join(leftover)!r}: arguments after -- are for --pytest or --discover"
        raise UsageError(msg)
    extra = list(pytest_args if pytest_args is not None else getattr(args, "pytest_args", None) or [])
    # plan/matrix: --pytest collects, so it and --discover exclude each other; local passes
    # ``pytest_args`` because its --pytest also runs the shards: --discover then replaces collection
    if getattr(args, "pytest", False) and discovering and pytest_args is None:
        msg = "--pytest and --discover are two ways to find the tests: give one (docs/planning.md says which fits)"
        raise UsageError(msg)
    if args.from_timings and not durations_paths and not cached_paths:
        msg = "--from-timings needs --durations FILE (or 'timings' in the config)"
        raise UsageError(msg)
    if getattr(args, "pytest", False) and not discovering:
        check_pytest_words(extra, cwd)
        collection = collect_pytest(extra, cwd=cwd, env=env)
        items += collection.ids
        rootdir = portable_rootdir(collection.rootdir, cwd)
        sources += 1
    if getattr(args, "durations_root", None):
        estimates = rebase_keys(estimates, durations_root=args.durations_root, ids_root=rootdir or ".")
    if discovering or (args.glob and args.from_timings):
        discovery, discovery_notes = discover_items(
            cwd=cwd, pytest_files=discovering, pytest_args=extra, globs=args.glob or (), timings=estimates
        )
        items += discovery.items
        estimates = dict(discovery.estimates)
        sources += 1
    elif args.from_timings:
        items += sorted(estimates)
        sources += 1
    if not sources:
        msg = "no items: give --items FILE, --glob PATTERN, --pytest [-- ARGS], --discover or --from-timings"
        raise UsageError(msg)
    if rootdir not in (None, ".") and sources > 1:
        msg = (
            f"--pytest ids are relative to pytest's rootdir {rootdir!r}, the other item sources to the working"
            " directory: plan from the rootdir to combine them"
        )
        raise UsageError(msg)

    estimates, remap_note = match_timings(
        items, estimates, allow_unmatched=getattr(args, "allow_unmatched_timings", False)
    )
    all_items = items
    mode = SelectMode(_pick(getattr(args, "select", None), config.select, SelectMode.OFF))
    selection = _select(args, config, mode, items, cwd=cwd, rootdir=rootdir, env=env)
    if selection is not None and mode is SelectMode.CHANGED:
        items = list(selection.selected)
    options: dict[str, Any] = {
        "granularity": Granularity(_pick(args.granularity, config.granularity, Granularity.AUTO)),
        "keep_together": tuple(args.keep_together or config.keep_together),
        "weights": _weights(args.weight, config),
        "max_items_per_shard": _pick(args.max_items_per_shard, config.max_items_per_shard),
        "strategy": _pick(args.strategy, config.strategy, "balanced"),
        "cut_cost": _pick(args.cut_cost, config.cut_cost, 0.0),
    }
    if options["max_items_per_shard"] is not None and options["max_items_per_shard"] < 1:
        msg = "--max-items-per-shard must be at least 1"
        raise UsageError(msg)
    target = _pick(args.target_seconds, config.target_seconds)
    overhead, overhead_source = shard_overhead(args.shard_overhead, config.shard_overhead, stores, variant)
    shards = _pick(args.shards, config.shards, "auto" if target is not None else None)
    if shards is None:
        msg = "--shards is required: a number, or auto with --target-seconds"
        raise UsageError(msg)
    auto_only = {"--target-seconds": args.target_seconds, "--shard-overhead": args.shard_overhead}
    auto_only["--max-shards"] = args.max_shards
    misplaced = [flag for flag, value in auto_only.items() if value is not None]
    if shards != "auto" and misplaced:
        verb = "apply" if len(misplaced) > 1 else "applies"
        msg = f"{', '.join(misplaced)} {verb} only to --shards auto, not to --shards {shards}"
        raise UsageError(msg)
    if shards == "auto":
        if target is None:
            msg = "--shards auto needs --target-seconds S (the slowest shard should fit S)"
            raise UsageError(msg)
        max_shards = _pick(args.max_shards, config.max_shards, DEFAULT_MAX_SHARDS)
        if max_shards < 1:
            msg = "--max-shards must be at least 1"
            raise UsageError(msg)
        choice = choose_shards(
            items,
            estimates,
            target_seconds=target,
            shard_overhead=overhead,
            overhead_source=overhead_source,
            max_shards=max_shards,
            **options,
        )
        plan = choice.plan
        if plan.total > matrix_mod.GITHUB_MATRIX_MAX:
            raise UsageError(matrix_mod.over_matrix_limit(plan.total, "--shards auto"))
    else:
        if not str(shards).isdigit() or int(shards) < 1:
            msg = f"--shards must be a whole number ≥ 1 or auto, not {shards!r}"
            raise UsageError(msg)
        count = int(shards)
        if selection is not None and mode is SelectMode.CHANGED:
            count = shrink_shards(count, all_items, items, estimates)
        plan = plan_items(items, estimates, count, **options)
        if overhead:
            note = f"every shard also pays {overhead:g} s of fixed overhead ({overhead_source})"
            plan = dataclasses.replace(plan, shard_overhead_seconds=overhead, notes=(*plan.notes, note))
    if discovery is not None:
        plan = dataclasses.replace(
            whole_files_as_items(plan),
            unknown_items=plan.unknown_items + len(discovery.new_files),
            notes=(*plan.notes, *discovery_notes),
        )
    measured = {i: estimates[i] for i in plan.items if i in estimates}
    skipped = selection.skipped if selection is not None else {}
    return dataclasses.replace(
        plan,
        created_at=_created_at(env),
        rootdir=rootdir,
        notes=(*plan.notes, remap_note) if remap_note else plan.notes,
        measured_ratio=measured_ratio([s.items for s in plan.shards], measured) if plan.unknown_items else None,
        skipped_by_diff=skipped if mode is SelectMode.CHANGED else {},
        would_skip=skipped if mode is SelectMode.SHADOW else {},
        selection=(f"select: {mode.value}", *selection.lines) if selection is not None else (),
    )


def _select(
    args: argparse.Namespace,
    config: Config,
    mode: SelectMode,
    items: Sequence[str],
    *,
    cwd: Path,
    rootdir: str | None,
    env: Mapping[str, str],
) -> Selection | None:
    """The change-based selection (None with ``--select off``); every decision line goes to the console."""
    if mode is SelectMode.OFF:
        given = [
            f
            for f, v in (
                ("--base", args.base),
                ("--select-coverage", args.select_coverage),
                ("--select-failures", args.select_failures),
            )
            if v
        ]
        if given:
            msg = f"{', '.join(given)} apply only to --select changed or shadow (the selection is off)"
            raise UsageError(msg)
        return None
    settings = dataclasses.replace(
        config.selection,
        coverage=getattr(args, "select_coverage", None) or config.selection.coverage,
        failures=getattr(args, "select_failures", None) or config.selection.failures,
    )
    selection = select_items(
        items, cwd=cwd, rootdir=rootdir, env=env, settings=settings, base=getattr(args, "base", None)
    )
    console = console_for(env)
    for line in selection.lines:
        console.line(f"select ({mode.value}): {line}")
    return selection


# --------------------------------------------------------------------------------------------
# handlers


def _plan_command(args: argparse.Namespace) -> int:
    plan = plan_from_options(args, env=os.environ, cwd=Path.cwd())
    code = emit_plan(plan, output_format=args.format, output=args.output, env=os.environ)
    check_not_empty(plan, allowed=allow_empty(args.allow_empty, Path.cwd(), args.config))
    return code


def emit_plan(plan: Plan, *, output_format: str, output: str | None, env: Mapping[str, str]) -> int:
    console = console_for(env)
    for note in plan.notes:
        console.notice(note)
    if output:
        outfile.write_output(output, plan.dumps())
        console.line(f"wrote {outfile.describe(output)} ({plan.total} shards, digest {plan.digest})")
    if output_format != "json":
        # with -o - stdout carries plan.json, so the table goes beside the messages, as matrix does
        (sys.stderr if outfile.is_stdout(output) else sys.stdout).write(render_plan(plan, output_format))
    elif not output:
        sys.stdout.write(plan.dumps())
    return 0


def _matrix_command(args: argparse.Namespace) -> int:
    if args.plan:
        given = [flag for dest, flag in args.plan_option_flags.items() if getattr(args, dest, None) not in _UNSET]
        if args.pytest_args:
            given.append("-- PYTEST_ARGS")
        if given:
            msg = f"--plan {args.plan} cannot be combined with plan options ({', '.join(given)}): the plan decides them"
            raise UsageError(msg)
    plan = load_plan(args.plan) if args.plan else plan_from_options(args, env=os.environ, cwd=Path.cwd())
    code = emit_matrix(plan=plan, plan_out=args.plan_out, env=os.environ)
    check_not_empty(plan, allowed=allow_empty(args.allow_empty, Path.cwd(), args.config))
    return code


_UNSET: tuple[object, ...] = (None, False, [])  # the defaults of add_plan_options' arguments


def emit_matrix(*, plan: Plan, plan_out: str, env: Mapping[str, str]) -> int:
    if plan.total > matrix_mod.GITHUB_MATRIX_MAX:  # before anything is written: GitHub would refuse the matrix
        raise UsageError(matrix_mod.over_matrix_limit(plan.total, "matrix"))
    console = console_for(env)
    for note in plan.notes:
        console.notice(note)
    if outfile.is_stdout(plan_out):
        msg = "--plan-out -: stdout carries the matrix; name a file for plan.json"
        raise UsageError(msg)
    outfile.write_output(plan_out, plan.dumps())
    sys.stdout.write(matrix_mod.matrix_json(plan) + "\n")
    outputs = matrix_mod.job_outputs(plan)
    github_output = env.get("GITHUB_OUTPUT")
    if github_output:
        matrix_mod.append_outputs(github_output, outputs)
    console.line(f"plan {plan.digest}: {plan.total} shards, {len(plan.items)} items, written to {plan_out}")
    if outputs["empty"] == "true":
        console.warning("no items to run: the plan is empty (output empty=true)")
    sys.stderr.write(render_plan(plan, "table"))
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``plan``, ``matrix`` and ``timings``."""
    plan = subparsers.add_parser(
        "plan",
        help="balance the items into shards and write plan.json",
        description="Collect the items, estimate them from timings, and balance them into shards.",
    )
    add_plan_options(plan)
    plan.add_argument(
        "--format",
        choices=["table", "json", "markdown"],
        default="table",
        help="stdout format; json is plan.json exactly (default: table)",
    )
    plan.add_argument(
        "-o", "--output", metavar="FILE", help="write plan.json to FILE, - for stdout (default: not written)"
    )
    add_allow_empty(plan)
    plan.add_argument(
        "pytest_args",
        nargs="*",
        metavar="-- PYTEST_ARGS",
        help="with --pytest: arguments for collection, after -- (default: none)",
    )
    plan.set_defaults(handler=_plan_command)

    matrix = subparsers.add_parser(
        "matrix",
        help="print the GitHub matrix for a plan and set the job outputs",
        description='Plan (or read --plan), write plan.json, print {"include": [...]}; with $GITHUB_OUTPUT set,'
        " append the outputs matrix, plan-digest, total and empty.",
    )
    known = len(matrix._actions)
    add_plan_options(matrix)
    # which options decide a plan, so --plan can refuse them rather than silently ignore them
    matrix.set_defaults(plan_option_flags={a.dest: a.option_strings[0] for a in matrix._actions[known:]})
    matrix.add_argument("--plan", metavar="FILE", help="use this plan.json instead of planning (default: plan now)")
    matrix.add_argument(
        "--plan-out", default="plan.json", metavar="PATH", help="where plan.json is written (default: plan.json)"
    )
    add_allow_empty(matrix)
    matrix.add_argument(
        "pytest_args",
        nargs="*",
        metavar="-- PYTEST_ARGS",
        help="with --pytest: arguments for collection, after -- (default: none)",
    )
    matrix.set_defaults(handler=_matrix_command)
    timings_commands.register(subparsers)
