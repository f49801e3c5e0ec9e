"""The verdict's data types: what ``aggregate.decide`` returns and every report renders.

Frozen and plain, so reports, the CLI and ``ci-shards local`` can share them without I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from ci_shards.common.errors import EXIT_FAILED, EXIT_OK
from ci_shards.judge import FlakyResult
from ci_shards.model.failures import FailureRecord
from ci_shards.model.outcome import LEFT_OUT, CaseResult, ShardStatus, Totals
from ci_shards.model.plan import Granularity
from ci_shards.select.report import SelectionReport

# outcomes whose time is no measurement of the test: skipped before it ran, or no test at all
UNMEASURED: Final = frozenset({"skipped", LEFT_OUT})
# shards whose wall time and collection mean something: they ran their tests to the end
RAN_TO_THE_END: Final = frozenset({ShardStatus.PASSED, ShardStatus.FAILED})


@dataclass(frozen=True, kw_only=True)
class ShardResult:
    """One planned shard as the aggregate sees it."""

    index: int
    status: ShardStatus
    reason: str = ""
    estimated_seconds: float = 0.0
    elapsed_seconds: float = 0.0
    planned_items: int = 0
    totals: Totals = field(default_factory=Totals)
    source: str = ""  # the folder that counted ("" when none arrived)
    notes: tuple[str, ...] = ()  # ignored earlier attempts, unreadable side files...
    verified: bool = True  # False: its results could not be matched to planned items
    cases: tuple[CaseResult, ...] = field(default=(), repr=False)
    collect_seconds: Mapping[str, float] = field(default_factory=dict, repr=False)  # outcome.json's, per test file
    spread: frozenset[str] = frozenset()  # the plan's files run by class and function on every worker
    joined: tuple[tuple[str, ...], ...] = ()  # the plan's groups of files run as one unit on one worker


@dataclass(frozen=True, kw_only=True)
class Accounting:
    """Planned items against what ran. ``unit`` is what the lists name: tests or files.

    ``unplanned`` ran but no planned item owns them ("ran, not planned": tests added since the plan,
    the next plan's unknown items); they are listed, never missing and never a failure by themselves.
    """

    unit: str
    planned: int
    missing: tuple[str, ...] = ()
    duplicated: tuple[str, ...] = ()
    unplanned: tuple[str, ...] = ()
    unverified_shards: tuple[int, ...] = ()
    unplanned_shard: Mapping[str, int] = field(default_factory=dict)  # unplanned id → the shard that ran it

    @property
    def clean(self) -> bool:
        return not (self.missing or self.duplicated)


@dataclass(frozen=True, kw_only=True)
class Verdict:
    plan_digest: str
    total_shards: int
    granularity: Granularity
    shards: tuple[ShardResult, ...]
    accounting: Accounting
    failures: tuple[FailureRecord, ...]
    totals: Totals
    lower_bound_seconds: float = 0.0
    estimated_makespan: float = 0.0
    workers: int = 1  # the plan's pytest-xdist workers per shard (its overhead is learned per K)
    unknown_items: int = 0  # planned items the plan had no timing for: their estimates were guesses
    flaky_result: FlakyResult = FlakyResult.PASS
    notes: tuple[str, ...] = ()  # folders that belong to no planned shard, etc.
    item_seconds: Mapping[str, float] = field(
        default_factory=dict
    )  # measured seconds per planned item (NaN: a test in it had an implausible time)
    reasons: tuple[str, ...] = ()  # why the run failed, most important first (empty: it passed)
    selection: SelectionReport | None = None  # plan --select changed|shadow: what was (or would be) skipped

    @property
    def passed(self) -> bool:
        return not self.reasons

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.passed else EXIT_FAILED

    @property
    def cases(self) -> list[CaseResult]:
        """Every test result that counted, shard by shard."""
        return [case for shard in self.shards for case in shard.cases]

    @property
    def flaky(self) -> list[tuple[int, CaseResult]]:
        return [(s.index, c) for s in self.shards for c in s.cases if c.flaky]

    @property
    def actual_makespan(self) -> float:
        return max((s.elapsed_seconds for s in self.shards), default=0.0)

    @property
    def headline(self) -> str:
        t = self.totals
        counts = t.counts_line()
        if t.flaky:
            counts += f", {t.flaky} flaky"
        if self.passed:
            return f"PASSED: {counts} across {self.total_shards} shards"
        return f"FAILED: {'; '.join(self.reasons)} ({counts})"

    def durations(self) -> dict[str, float]:
        """Measured seconds for the timings store: per test, and per planned item that is not a single
        test (a file or class item costs the sum of its tests, which is what the planner balances).
        Skipped tests say nothing about duration (``skipped_tests`` has them; an xfailed test ran and
        is measured); an implausible time (``CaseResult.time_invalid``) is NaN here, so
        ``TimingsStore.record`` skips it and counts it in a warning."""
        measured: dict[str, float] = {}
        for case in self.cases:
            if case.counted_as not in UNMEASURED:
                seconds = math.nan if case.time_invalid else case.time
                measured[case.test_id] = measured.get(case.test_id, 0.0) + seconds
        return {**measured, **{k: v for k, v in self.item_seconds.items() if k not in measured}}

    def collect_seconds(self) -> dict[str, float]:
        """Each test file's collection seconds, for the timings store: from the shards that ran to the end
        with their results matched (a killed shard may have collected under other load), the median over
        the shards that collected it (a file cut into parts is collected by each)."""
        seen: dict[str, list[float]] = {}
        for shard in self.shards:
            if shard.status in RAN_TO_THE_END and shard.verified:
                for file, seconds in shard.collect_seconds.items():
                    seen.setdefault(file, []).append(seconds)
        return {file: float(statistics.median(values)) for file, values in sorted(seen.items())}

    def skipped_tests(self) -> dict[str, float]:
        """The tests pytest reported as skipped, with their (setup and teardown) seconds: the timings
        store records them as known, never as a measurement (``TimingsStore.record``'s ``known``)."""
        return {c.test_id: c.time for c in self.cases if c.counted_as == "skipped" and not c.time_invalid}
