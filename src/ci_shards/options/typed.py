"""The typed options each stage takes, built once from the parsed flags and the config file.

The rule "a flag wins over the config, the config over the built-in default" is ``_pick``, here and only here.
``values`` is the parsed command line by dest (``vars(namespace)``): the commands/ layer is the last to hold an
argparse Namespace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from ci_shards.common.errors import UsageError
from ci_shards.judge import FlakyResult
from ci_shards.model.plan import Granularity
from ci_shards.options.config import MAX_WEIGHT, Config
from ci_shards.options.declared import DEFAULT_MAX_SHARDS, PLAN_OPTIONS
from ci_shards.options.spec import given_flags
from ci_shards.options.values import CommentMode
from ci_shards.report.quarantine import QuarantineEntry
from ci_shards.run.settings import RunSettings
from ci_shards.run.workers import DEFAULT_WORKER_MEMORY
from ci_shards.select.settings import SelectionSettings, SelectMode

T = TypeVar("T")


def _pick(flag: T | None, configured: T | None, default: T) -> T:
    """The flag if given, else the config's value, else the default."""
    return flag if flag is not None else configured if configured is not None else default


def _switch(flag: bool | None, configured: bool | None) -> bool:
    """An on-switch (``--allow-empty``): absent on the command line it is False, so the config can only turn it on."""
    return bool(flag) or configured is True


@dataclass(frozen=True, kw_only=True)
class PlanOptions:
    """Everything that decides a plan: where the items and timings come from, how many shards, how to balance."""

    config_path: str | None = None  # --config (None: ci-shards.yml, else pyproject.toml)
    items: tuple[str, ...] = ()  # --items files ("-" is stdin)
    globs: tuple[str, ...] = ()
    pytest: bool = False
    python: str | None = None  # --python as given (None: chosen at the edge, interpreter.default_python)
    discover: bool = False
    from_timings: bool = False
    durations: tuple[str, ...] = ()  # --durations, else the config's timings
    durations_explicit: bool = False  # the files came from --durations (must exist), not the config
    cached_durations: tuple[str, ...] = ()
    durations_root: str | None = None
    allow_unmatched_timings: bool = False
    variant: str | None = None
    shards: str | None = None  # "N" or "auto"; None: nothing said it
    workers: str = "1"  # --workers K|auto, else the config's workers (plan/workers.py)
    worker_memory: int = DEFAULT_WORKER_MEMORY  # --worker-memory: per-worker budget of --workers auto
    target_seconds: float | None = None
    shard_overhead: float | None = None  # None: learned from the timings store, else 0
    shard_overhead_source: str = ""  # "--shard-overhead" or "config shard-overhead"
    max_shards: int = DEFAULT_MAX_SHARDS
    granularity: Granularity = Granularity.AUTO
    keep_together: tuple[str, ...] = ()
    weights: Mapping[str, float] = field(default_factory=dict)
    max_items_per_shard: int | None = None
    cut_cost: float = 0.0
    strategy: str = "balanced"
    select: SelectMode = SelectMode.OFF
    base: str | None = None
    selection: SelectionSettings = field(default_factory=SelectionSettings)
    pytest_args: tuple[str, ...] = ()  # the words after -- (plan, matrix)
    allow_empty: bool = False
    given: tuple[str, ...] = ()  # the plan flags the command line gave, in --help order (for error messages)
    # a first plan deals its files over the shards (planner.deal_scopes); local's shards share one working tree
    deal_untimed: bool = True


def _weights(raw: Sequence[str] | None, configured: Mapping[str, float]) -> dict[str, float]:
    weights = dict(configured)
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


def plan_options(values: Mapping[str, Any], config: Config) -> PlanOptions:
    """The plan options from the parsed flags (by dest) over ``config``."""
    target = _pick(values.get("target_seconds"), config.target_seconds, None)
    overhead_flag = values.get("shard_overhead")
    overhead_source = "--shard-overhead" if overhead_flag is not None else "config shard-overhead"
    selection = replace(
        config.selection,
        coverage=values.get("select_coverage") or config.selection.coverage,
        failures=values.get("select_failures") or config.selection.failures,
    )
    return PlanOptions(
        config_path=values.get("config"),
        items=tuple(values.get("items") or ()),
        globs=tuple(values.get("glob") or ()),
        pytest=bool(values.get("pytest")),
        python=_pick(values.get("python"), config.python, None),
        discover=bool(values.get("discover")),
        from_timings=bool(values.get("from_timings")),
        durations=tuple(values.get("durations") or ([config.timings] if config.timings else [])),
        durations_explicit=bool(values.get("durations")),
        cached_durations=tuple(values.get("cached_durations") or ()),
        durations_root=values.get("durations_root"),
        allow_unmatched_timings=bool(values.get("allow_unmatched_timings")),
        variant=_pick(values.get("variant"), config.variant, None),
        shards=_pick(values.get("shards"), config.shards, "auto" if target is not None else None),
        target_seconds=target,
        workers=_pick(values.get("workers"), config.workers, "1"),
        worker_memory=values.get("worker_memory") or DEFAULT_WORKER_MEMORY,
        shard_overhead=_pick(overhead_flag, config.shard_overhead, None),
        shard_overhead_source=overhead_source,
        max_shards=_pick(values.get("max_shards"), config.max_shards, DEFAULT_MAX_SHARDS),
        granularity=Granularity(_pick(values.get("granularity"), config.granularity, Granularity.AUTO)),
        keep_together=tuple(values.get("keep_together") or config.keep_together),
        weights=_weights(values.get("weight"), config.weights),
        max_items_per_shard=_pick(values.get("max_items_per_shard"), config.max_items_per_shard, None),
        cut_cost=_pick(values.get("cut_cost"), config.cut_cost, 0.0),
        strategy=_pick(values.get("strategy"), config.strategy, "balanced"),
        select=SelectMode(_pick(values.get("select"), config.select, SelectMode.OFF)),
        base=values.get("base"),
        selection=selection,
        pytest_args=tuple(values.get("pytest_args") or ()),
        allow_empty=_switch(values.get("allow_empty"), config.allow_empty),
        given=tuple(given_flags(values, PLAN_OPTIONS)),
    )


def run_options(values: Mapping[str, Any], config: Config) -> RunSettings:
    """The run options from the parsed flags (by dest) over ``config``."""
    raw = list(values.get("command") or ())
    return RunSettings(
        out=values["out"],
        command=tuple(raw[1:] if raw[:1] == ["--"] else raw),
        pytest=bool(values.get("pytest")),
        python=_pick(values.get("python"), config.python, None),
        junit=values.get("junit"),
        timeout=values.get("timeout"),
        grace=values["grace"],
        graceful_signal=values["graceful_signal"],
        retries=values["retries"],
        max_rerun_failures=values["max_rerun_failures"],
        flaky_result=FlakyResult(values["flaky_result"]),
        max_test_seconds=values.get("max_test_seconds"),
        accept_exit_code=bool(values.get("accept_exit_code")),
        leak_timeout=values["leak_timeout"],
        coverage=_pick(values.get("coverage"), config.coverage, False),
        coverage_map=bool(values.get("coverage_map", True)),
        coverage_map_per=str(values.get("coverage_map_per") or "test"),
        allow_empty=_switch(values.get("allow_empty"), config.allow_empty),
        workers=_pick(values.get("workers"), config.workers, None),
        worker_memory=values.get("worker_memory") or DEFAULT_WORKER_MEMORY,
    )


@dataclass(frozen=True, kw_only=True)
class ReportFiles:
    """What ``local`` writes besides its console output, as ``aggregate`` does (None: not written)."""

    junit_out: Path | None = None
    summary: Path | None = None
    failures: Path | None = None
    timings_out: Path | None = None
    timings_variant: str = ""


@dataclass(frozen=True, kw_only=True)
class LocalOptions:
    """``ci-shards local``: a plan, a run of each shard, and aggregate's reports and coverage gate."""

    plan: PlanOptions
    run: RunSettings
    jobs: str = "auto"  # N or auto
    job_memory: int
    reports: ReportFiles = field(default_factory=ReportFiles)
    fail_under: float | None = None
    coverage_base: str | None = None


def local_options(values: Mapping[str, Any], config: Config) -> LocalOptions:
    plan = plan_options(values, config)
    run = run_options(values, config)
    reports = ReportFiles(
        junit_out=values.get("junit_out"),
        summary=values.get("summary"),
        failures=values.get("failures"),
        timings_out=values.get("timings_out"),
        timings_variant=plan.variant or "",  # the variant the plan read, written back
    )
    # local's --pytest both collects and runs; the words after -- are the shards' command (or pytest's options)
    return LocalOptions(
        plan=replace(plan, pytest_args=()),
        run=run,
        jobs=values["jobs"],
        job_memory=values["job_memory"],
        reports=reports,
        fail_under=values.get("fail_under"),
        coverage_base=values.get("coverage_base"),
    )


@dataclass(frozen=True, kw_only=True)
class AggregateOptions:
    """``ci-shards aggregate``: the shard folders, what to write, the comment, the history and the coverage fold."""

    plan: Path
    dirs: tuple[Path, ...]
    junit_out: Path | None = None
    failures_out: Path | None = None
    summary_out: Path | None = None
    github: bool = False
    timings_out: Path | None = None
    timings_variant: str = ""
    comment: bool = False
    comment_mode: CommentMode = CommentMode.ALWAYS
    comment_key: str | None = None
    comment_out: Path | None = None
    flaky_result: FlakyResult = FlakyResult.PASS
    allow_empty: bool = False  # --allow-empty, else the config's allow-empty
    fail_on: str = "any"  # --fail-on, else the config's fail-on: new | any
    history: Path | None = None
    record_history: bool = False
    base_branch: str | None = None
    max_base_age: int = 14
    annotations: bool = True
    output_format: str = "text"
    coverage_out: Path | None = None
    fail_under: float | None = None
    coverage_base: str | None = None
    quarantine: tuple[QuarantineEntry, ...] = ()  # the config's
    config_source: str = ""  # where the config was read from (names it in quarantine messages)


def aggregate_options(values: Mapping[str, Any], config: Config) -> AggregateOptions:
    """The aggregate options from the parsed flags (by dest) over ``config``."""
    return AggregateOptions(
        plan=values["plan"],
        dirs=tuple(values["dirs"]),
        junit_out=values.get("junit"),
        failures_out=values.get("failures"),
        summary_out=values.get("summary"),
        github=bool(values.get("github")),
        timings_out=values.get("timings_out"),
        timings_variant=values.get("timings_variant") or "",
        comment=bool(values.get("comment")),
        comment_mode=CommentMode(values["comment_mode"]),
        comment_key=values.get("comment_key"),
        comment_out=values.get("comment_out"),
        flaky_result=FlakyResult(values["flaky_result"]),
        allow_empty=_switch(values.get("allow_empty"), config.allow_empty),
        fail_on=_pick(values.get("fail_on"), config.fail_on, "any"),
        history=values.get("history"),
        record_history=bool(values.get("record_history")),
        base_branch=values.get("base_branch"),
        max_base_age=values["max_base_age"],
        annotations=not values.get("no_annotations"),
        output_format=values["format"],
        coverage_out=values.get("coverage_out"),
        fail_under=values.get("fail_under"),
        coverage_base=values.get("coverage_base"),
        quarantine=config.quarantine,
        config_source=config.source,
    )
