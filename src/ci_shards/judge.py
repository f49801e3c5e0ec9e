"""The one judge: the rules that decide a shard's status, shared by ``run``, ``aggregate`` and ``local``.

docs/rules.md states them in words. ``run`` decides what its processes did (never-started, timed-out,
cancelled, the exit code against the report) and then hands the shard folder it is about to write to
``judge_shard``; ``aggregate`` hands it the same folder as it read it back. Both therefore give one
shard the same status, and ``run`` exits with it. Which test belongs to which planned item is
``model.matching.owning_item`` (the one matcher; the pytest plugin selects with it too).

Pure: plain values in, a frozen ``Judgement`` out.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final

from ci_shards.common.console import plural
from ci_shards.common.errors import TestsFailed
from ci_shards.model.failures import FailureKind
from ci_shards.model.matching import owning_item
from ci_shards.model.outcome import COLLECTION_ERROR_TYPE, CaseOutcome, CaseResult, ShardStatus
from ci_shards.model.plan import Plan

# the runner's shard-level pseudo test (no report, a crash): a failure, but neither planned nor unplanned
SHARD_CASE_CLASSNAME: Final = "ci-shards"
# <error type=...> of the cases the runner writes in for tests that never reported
NOT_RUN_TYPE: Final = "not-run"
TIMEOUT_TYPE: Final = "timed-out"
NO_REPORT_TYPE: Final = "no test report"
SYNTHESISED_TYPES: Final = frozenset({NOT_RUN_TYPE, TIMEOUT_TYPE, NO_REPORT_TYPE})

NO_TESTS_RAN: Final = "no tests ran"
EMPTY_PLAN: Final = f"{NO_TESTS_RAN}: the plan has no items"
ALLOW_EMPTY_HINT: Final = "--allow-empty (config allow-empty, action input allow-empty) accepts that"


class FlakyResult(str, Enum):
    """Whether flaky tests (failed, then passed on a re-run) fail the run. They are always listed."""

    PASS = "pass"
    FAIL = "fail"


def is_shard_case(case: CaseResult) -> bool:
    return case.classname == SHARD_CASE_CLASSNAME


def failure_kind(case: CaseResult) -> FailureKind | None:
    """The failures.jsonl kind of one test case, or None when it is no failure (passed, skipped)."""
    if case.flaky:
        return FailureKind.FLAKY
    if not case.outcome.is_bad:
        return None
    if case.type == NOT_RUN_TYPE:
        return FailureKind.NOT_RUN
    if case.type == TIMEOUT_TYPE:
        return FailureKind.TIMED_OUT
    return FailureKind.ERROR if case.outcome is CaseOutcome.ERROR else FailureKind.FAILED


@dataclass(frozen=True, kw_only=True)
class Judgement:
    status: ShardStatus
    reason: str
    verified: bool = True  # False: tests were reported, but none of them belongs to a planned item
    counts: bool = True  # False: its test results cannot be used (junit.xml unreadable)


# what is known, not a guess at the cause (the unowned shard that walked a whole package ran only
# tests outside its plan, and was told it wrote "JUnit without file attributes": issue 26.3)
UNVERIFIED: Final = (
    "its results name none of its {planned}, so they count as missing "
    "(every test it reported is outside its plan: only tests no planned item covers ran, or the ids are"
    " written another way than the plan's)"
)
UNVERIFIED_NOTHING_PLANNED: Final = "it was planned no items but reported tests that no planned item owns"


def verified(planned: Collection[str], cases: Sequence[CaseResult]) -> bool:
    """Whether the reported tests can be matched to the plan: no tests at all, or at least one that a
    planned item of this shard owns. A shard whose tests match none of its items proves nothing ran."""
    tests = [c for c in cases if not is_shard_case(c) and c.type != COLLECTION_ERROR_TYPE]
    return not tests or any(owning_item(c.test_id, planned) is not None for c in tests)


def judge_shard(
    *,
    planned: Sequence[str],
    reported: ShardStatus,
    reason: str,
    cases: Sequence[CaseResult] | None,
    junit_error: str = "",
    accounted: bool = True,
) -> Judgement:
    """The status of one shard from what its folder holds, first match wins.

    ``reported``/``reason``: what the runner decided (outcome.json); ``cases``: junit.xml's test cases
    (None: no junit.xml); ``accounted`` False: ``--accept-exit-code`` without a usable report, the
    runner's status stands and the items are not matched. A status that is not a success stands; a
    success must be backed by the tests: none failed, some ran when items were planned, and they belong
    to the shard's planned items.
    """
    if junit_error:
        problem = f"junit.xml is unreadable: {junit_error}"
        if reported.is_success:
            return Judgement(status=ShardStatus.FAILED, reason=problem, counts=False)
        return Judgement(status=reported, reason=_with(reason or _default_reason(reported), problem), counts=False)
    if reported is ShardStatus.SKIPPED_BY_DIFF:
        return Judgement(status=reported, reason=reason)
    if cases is None:
        if not reported.is_success or (not planned and reported is ShardStatus.EMPTY):
            return Judgement(status=reported, reason=reason or _default_reason(reported))
        return Judgement(status=ShardStatus.FAILED, reason="no junit.xml although the runner reported success")
    own = frozenset(planned)
    if not verified(own, cases):
        why = UNVERIFIED.format(planned=plural(len(planned), "planned item")) if planned else UNVERIFIED_NOTHING_PLANNED
        if reported.is_success:
            return Judgement(status=ShardStatus.FAILED, reason=why, verified=False)
        return Judgement(status=reported, reason=_with(reason or _default_reason(reported), why), verified=False)
    if not reported.is_success:
        return Judgement(status=reported, reason=reason or _default_reason(reported))
    if not accounted:
        return Judgement(status=reported, reason=reason)
    bad = sum(c.outcome.is_bad for c in cases)
    if bad:
        why = f"{plural(bad, 'test')} failed although the runner reported {reported.value}"
        return Judgement(status=ShardStatus.FAILED, reason=why)
    if reported is ShardStatus.EMPTY and planned:
        why = f"reported empty, but the plan gave it {plural(len(planned), 'item')}"
        return Judgement(status=ShardStatus.FAILED, reason=why)
    if planned and not cases:
        return Judgement(status=ShardStatus.FAILED, reason="no tests ran although the plan gave it items")
    return Judgement(status=reported, reason=reason)


def _default_reason(status: ShardStatus) -> str:
    return f"the runner reported {status.value}"


def _with(reason: str, problem: str) -> str:
    """``reason; problem``, once: the runner already ran these rules, so judging a folder twice (run,
    then aggregate) changes nothing, not even the reason."""
    return reason if problem in reason else f"{reason}; {problem}"


def empty_plan_message(what: str, *, deselected: int = 0) -> str:
    """The one line ``plan``, ``matrix``, ``run`` and ``local`` exit 1 with for a plan with no items.
    ``deselected``: the tests pytest collected and -k/-m deselected, every one of them (plain pytest exits 5 then
    too, "N deselected"): named, since "nothing was collected" would send the user looking for a wrong path."""
    why = _all_deselected(deselected) if deselected else "nothing was collected or listed"
    return f"no tests to run: {what} has no items ({why}); {ALLOW_EMPTY_HINT}"


def _all_deselected(deselected: int) -> str:
    return f'pytest collected {plural(deselected, "test")} and deselected every one: "{deselected} deselected"'


def empty_run_reason(*, planned_items: int, executed_tests: int, allow_empty: bool, deselected: int = 0) -> str:
    """Why a whole run fails for having nothing in it ("" when it does not): a plan with no items, or
    a run in which no test executed (every one skipped or deselected). ``--allow-empty`` accepts both.
    ``deselected``: the planned tests the shards' own filters deselected (plain pytest's "N deselected", exit 5)."""
    if allow_empty:
        return ""
    if planned_items == 0:
        return EMPTY_PLAN
    if executed_tests == 0:
        were = "was" if planned_items == 1 else "were"
        planned = f"{plural(planned_items, 'item')} {were} planned"
        if deselected:
            tests = plural(deselected, "planned test")  # the plan's: a cut file's unplanned tests are not counted
            return f"{NO_TESTS_RAN}: {planned}, but -k/-m deselected {tests} and no other test ran"
        return f"{NO_TESTS_RAN}: {planned}, but every test was skipped or none reported"
    return ""


def check_not_empty(plan: Plan, *, allowed: bool, what: str = "the plan") -> None:
    """Exit 1 (``TestsFailed``) with one line when the plan has no items, unless ``--allow-empty``:
    an empty suite must never pass silently (call it after every output was written)."""
    if not plan.items and not plan.skipped_by_diff and not allowed:
        raise TestsFailed(empty_plan_message(what, deselected=plan.deselected))
