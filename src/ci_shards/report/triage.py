"""Each failure of a run classified against the test history and the quarantine list.

- **quarantined**: an entry of the config's ``quarantine:`` in force matches it;
- **flaky**: it passed on this same commit in the history, or its flaky rate (re-run passes, and
  failures on a commit it also passed on) is at least ``FLAKY_RATE``;
- **known**: its latest result on the base branch failed too (named: since which run and commit);
- **new**: everything else, and always when the base result is older than ``max_base_age_days``
  or from a commit that is not an ancestor of this one (fail safe: doubt never excuses a failure).

Pure: the history, this run's marks and a ``TriageContext`` in, a ``Triage`` out. The caller
checks ancestry with git (``Ancestry.UNKNOWN`` when it cannot) and reads the clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import Final

from ci_shards.history.outcomes import History, Mark, RunInfo
from ci_shards.report.quarantine import QuarantineEntry, entry_for, expired_messages

FLAKY_RATE: Final = 0.1  # a test flaky in at least 10% of its recorded runs counts as flaky
DEFAULT_MAX_BASE_AGE_DAYS: Final = 14
TOP_FLAKY: Final = 10
_FLAKY_CHARS: Final = {Mark.FLAKY.value, Mark.FAILED.value, Mark.ERROR.value}


class FailOn(str, Enum):
    """Which failures fail the build: every one (``any``) or only new ones (``new``)."""

    NEW = "new"
    ANY = "any"


class Kind(str, Enum):
    NEW = "new"
    KNOWN = "known"
    FLAKY = "flaky"
    QUARANTINED = "quarantined"


class Ancestry(Enum):
    ANCESTOR = "ancestor"
    NOT_ANCESTOR = "not-ancestor"
    UNKNOWN = "unknown"  # no git, a shallow clone, or no commit recorded


@dataclass(frozen=True, kw_only=True)
class Classified:
    test_id: str
    kind: Kind
    why: str


@dataclass(frozen=True, kw_only=True)
class FlakyRate:
    test_id: str
    flaky_runs: int
    runs: int
    quarantined: bool

    @property
    def rate(self) -> float:
        return self.flaky_runs / self.runs if self.runs else 0.0


@dataclass(frozen=True, kw_only=True)
class QuarantinedTest:
    test_id: str
    mark: Mark
    entry: QuarantineEntry


@dataclass(frozen=True, kw_only=True)
class TriageContext:
    commit: str  # this run's commit ("" when unknown)
    base_branch: str
    now: datetime
    fail_on: FailOn = FailOn.ANY
    max_base_age_days: int = DEFAULT_MAX_BASE_AGE_DAYS
    ancestry: Mapping[str, Ancestry] = field(default_factory=dict)  # base commit → is it an ancestor?
    quarantine: Sequence[QuarantineEntry] = ()
    quarantine_source: str = ""


@dataclass(frozen=True, kw_only=True)
class Triage:
    fail_on: FailOn
    base_branch: str
    base_runs: int  # runs of the base branch in the history (0: nothing to compare with)
    failures: tuple[Classified, ...] = ()  # new first, then known, flaky, quarantined
    quarantined: tuple[QuarantinedTest, ...] = ()  # every quarantined test that ran
    flaky_rates: tuple[FlakyRate, ...] = ()  # the top flaky tests of the history and this run
    expired: tuple[str, ...] = ()  # expired quarantine entries: each fails the verdict

    def of_kind(self, kind: Kind) -> list[Classified]:
        return [c for c in self.failures if c.kind is kind]

    @property
    def excused(self) -> frozenset[str]:
        """Failing tests that do not fail the build: quarantined ones, and with ``--fail-on new``
        the known and flaky ones."""
        kinds = {Kind.QUARANTINED} | ({Kind.KNOWN, Kind.FLAKY} if self.fail_on is FailOn.NEW else set())
        return frozenset(c.test_id for c in self.failures if c.kind in kinds)


_ORDER: Final = {Kind.NEW: 0, Kind.KNOWN: 1, Kind.FLAKY: 2, Kind.QUARANTINED: 3}


def classify(failing: Sequence[str], marks: Mapping[str, Mark], history: History, ctx: TriageContext) -> Triage:
    """``failing``: this run's failing test ids; ``marks``: this run's result per test."""
    today = ctx.now.date()
    current = RunInfo(run="this run", commit=ctx.commit, branch="", date=ctx.now)
    classified = [_classify_one(t, marks.get(t, Mark.FAILED), history, current, ctx) for t in dict.fromkeys(failing)]
    classified.sort(key=lambda c: _ORDER[c.kind])
    quarantined = []
    for test_id, mark in sorted(marks.items()):
        entry = entry_for(test_id, ctx.quarantine, today)
        if entry is not None:
            quarantined.append(QuarantinedTest(test_id=test_id, mark=mark, entry=entry))
    return Triage(
        fail_on=ctx.fail_on,
        base_branch=ctx.base_branch,
        base_runs=sum(1 for r in history.runs if r.branch == ctx.base_branch),
        failures=tuple(classified),
        quarantined=tuple(quarantined),
        flaky_rates=tuple(top_flaky(history, marks, current, ctx)),
        expired=tuple(expired_messages(ctx.quarantine, today, ctx.quarantine_source)),
    )


def _classify_one(test_id: str, mark: Mark, history: History, current: RunInfo, ctx: TriageContext) -> Classified:
    entry = entry_for(test_id, ctx.quarantine, ctx.now.date())
    if entry is not None:
        return Classified(test_id=test_id, kind=Kind.QUARANTINED, why=f"quarantined: {entry.reason}")
    past = history.outcomes(test_id)
    if ctx.commit and any(run.commit == ctx.commit and m.passed for run, m in past):
        return Classified(test_id=test_id, kind=Kind.FLAKY, why="passed on this same commit in an earlier run")
    rate = flaky_rate(test_id, [*past, (current, mark)], quarantined=False)
    if rate.flaky_runs and rate.rate >= FLAKY_RATE:
        return Classified(
            test_id=test_id, kind=Kind.FLAKY, why=f"flaky in {rate.flaky_runs} of its last {rate.runs} runs"
        )
    return _against_base(test_id, past, ctx)


def _against_base(test_id: str, past: Sequence[tuple[RunInfo, Mark]], ctx: TriageContext) -> Classified:
    base = ctx.base_branch
    on_base = [(run, m) for run, m in past if run.branch == base and m is not Mark.SKIPPED]
    name = base or "the base branch"  # a history recorded without a branch name: never "failing on  since"
    if not on_base:
        return Classified(test_id=test_id, kind=Kind.NEW, why=f"no result on {name} to compare")
    latest, latest_mark = on_base[-1]
    if ctx.now - latest.date > timedelta(days=ctx.max_base_age_days):
        why = f"{name}'s latest result ({_when(latest)}) is older than {ctx.max_base_age_days} days"
        return Classified(test_id=test_id, kind=Kind.NEW, why=why)
    ancestry = ctx.ancestry.get(latest.commit, Ancestry.UNKNOWN)
    if ancestry is Ancestry.NOT_ANCESTOR:
        why = f"{name}'s latest result is from {_short(latest.commit)}, which is not an ancestor of this commit"
        return Classified(test_id=test_id, kind=Kind.NEW, why=why)
    if not latest_mark.is_bad:
        return Classified(test_id=test_id, kind=Kind.NEW, why=f"passed on {name} at {_when(latest)}")
    since = latest
    for run, m in reversed(on_base):
        if not m.is_bad:
            break
        since = run
    unchecked = " (ancestry not checked: no git history here)" if ancestry is Ancestry.UNKNOWN else ""
    return Classified(test_id=test_id, kind=Kind.KNOWN, why=f"failing on {name} since {_when(since)}{unchecked}")


def flaky_rate(test_id: str, outcomes: Sequence[tuple[RunInfo, Mark]], *, quarantined: bool) -> FlakyRate:
    """Runs in which the test was flaky: passed on a re-run, or failed on a commit it also passed on."""
    passed_on = {run.commit for run, m in outcomes if m.passed and run.commit}
    results = [(run, m) for run, m in outcomes if m is not Mark.SKIPPED]
    flaky = sum(1 for run, m in results if m is Mark.FLAKY or (m.is_bad and run.commit in passed_on))
    return FlakyRate(test_id=test_id, flaky_runs=flaky, runs=len(results), quarantined=quarantined)


def top_flaky(history: History, marks: Mapping[str, Mark], current: RunInfo, ctx: TriageContext) -> list[FlakyRate]:
    """The ``TOP_FLAKY`` tests with the highest flaky rate (then most flaky runs, then id)."""
    rates = []
    for test_id in sorted(history.tests.keys() | marks.keys()):
        seen = set(history.tests.get(test_id, "")) | ({marks[test_id].value} if test_id in marks else set())
        if not seen & _FLAKY_CHARS:
            continue  # never failed nor flaky: rate 0, and most tests are like this
        outcomes = history.outcomes(test_id)
        if test_id in marks:
            outcomes.append((current, marks[test_id]))
        rate = flaky_rate(test_id, outcomes, quarantined=False)
        if rate.flaky_runs:
            in_force = entry_for(test_id, ctx.quarantine, ctx.now.date()) is not None
            rates.append(FlakyRate(test_id=test_id, flaky_runs=rate.flaky_runs, runs=rate.runs, quarantined=in_force))
    rates.sort(key=lambda r: (-r.rate, -r.flaky_runs, r.test_id))
    return rates[:TOP_FLAKY]


def _short(commit: str) -> str:
    return commit[:10] or "an unknown commit"


def _when(run: RunInfo) -> str:
    return f"{_short(run.commit)} ({run.date:%Y-%m-%d}, run {run.run})"
