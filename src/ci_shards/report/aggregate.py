"""One verdict from every shard's artifacts, checked against the plan.

``decide`` is pure: the plan and what was read from the shard folders in, a frozen ``Verdict`` out.
``aggregate_dirs`` is the thin edge that finds and reads the folders first (``artifacts.py``).

The promise this module keeps: every planned item ran exactly once, or the verdict names the
items that did not (missing, run twice) and the shards at fault (never-started, from another plan,
unreadable, failed), and the exit code is 1. Tests that ran but no planned item owns (added since
the plan) are listed as "ran, not planned" with their shard: never missing, never a failure alone.

Tie-breaks and fallbacks, in the order they apply:
- Several folders for one shard (a CI re-run attempt): the highest ``runner.ci_run_attempt`` (or the
  ``-a<N>`` artifact-name suffix) wins, then the latest ``finished_at``, then the path; the others
  are noted on the shard. A latest attempt that is unreadable or from another plan still wins (the
  shard is ``error``): an earlier passing attempt never stands in for it.
- A test result belongs to the longest planned item that prefixes its id (``file::Class::test[p]``
  → ``file::Class::test`` → ``file::Class`` → ``file``), so class, parametrised and file items all
  account correctly.
- A shard's status is ``judge.judge_shard`` over its folder, the rules ``run`` ended with: a shard
  whose JUnit names none of its planned items (ids we cannot map, e.g. a runner that writes no file
  names) is *unverified* and fails, its planned items missing (docs/rules.md).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from ci_shards.common.console import count_failures, plural
from ci_shards.judge import (
    SHARD_CASE_CLASSNAME,
    SYNTHESISED_TYPES,
    FlakyResult,
    Judgement,
    empty_run_reason,
    failure_kind,
    is_shard_case,
    judge_shard,
)
from ci_shards.model.failures import FailureKind, FailureRecord
from ci_shards.model.matching import item_file, owning_item
from ci_shards.model.outcome import (
    COLLECTION_ERROR_TYPE,
    COLLECTOR_SKIPPED_TYPE,
    DESELECTED_MESSAGE,
    LEFT_OUT,
    CaseOutcome,
    CaseResult,
    ShardStatus,
    Totals,
)
from ci_shards.model.plan import Granularity, Plan, ShardPlan
from ci_shards.report.artifacts import ShardArtifact, read_shard_folders
from ci_shards.report.split_dependencies import split_dependencies, split_notes, split_reason
from ci_shards.report.verdict import UNMEASURED, Accounting, ShardResult, Verdict
from ci_shards.select.report import selection_report

# the verdict types live in verdict.py, the shard rules in judge.py; they are re-exported here, where
# callers look for them
__all__ = [
    "SHARD_CASE_CLASSNAME",
    "Accounting",
    "FlakyResult",
    "ShardResult",
    "Totals",
    "Verdict",
    "aggregate_dirs",
    "decide",
]

# --------------------------------------------------------------------------------------------
# choosing one folder per shard


def _rank(artifact: ShardArtifact) -> tuple[int, str, str]:
    # the attempt decides, never whether it is readable: a broken latest attempt must not let an
    # earlier passing one stand in for it (the shard is then `error`, the earlier one noted)
    return (artifact.run_attempt, artifact.finished_at, str(artifact.path))


def _describe(artifact: ShardArtifact) -> str:
    attempt = f"attempt {artifact.run_attempt}" if artifact.run_attempt else "an attempt"
    return f"{attempt} at {artifact.path}"


def _choose(
    plan: Plan, digest: str, artifacts: Sequence[ShardArtifact]
) -> tuple[dict[int, ShardArtifact], dict[int, list[str]], list[str]]:
    by_index: dict[int, list[ShardArtifact]] = defaultdict(list)
    stray: list[str] = []
    for artifact in artifacts:
        if artifact.index is None:
            stray.append(f"{artifact.path}: cannot tell which shard this is ({artifact.problem})")
        elif not 1 <= artifact.index <= plan.total:
            stray.append(
                f"{artifact.path}: shard {artifact.index} of {artifact.total} is not in this plan of {plan.total}"
            )
        else:
            by_index[artifact.index].append(artifact)
    chosen: dict[int, ShardArtifact] = {}
    ignored: dict[int, list[str]] = {}
    for index, group in by_index.items():
        ordered = sorted(group, key=_rank, reverse=True)
        latest = ordered[0]
        chosen[index] = latest
        usable = latest.outcome is not None and (latest.outcome.plan_digest, latest.outcome.shard_total) == (
            digest,
            plan.total,
        )
        unusable = "" if usable else " (although it is unusable, see the shard's reason)"
        ignored[index] = [
            f"{_describe(a)} ignored: {_describe(latest)} is the latest that counts{unusable}" for a in ordered[1:]
        ]
    return chosen, ignored, stray


# --------------------------------------------------------------------------------------------
# one shard


def _judge_shard(plan: Plan, digest: str, index: int, artifact: ShardArtifact | None) -> Judgement:
    """One planned shard: the folder checks that only aggregate can make (did it arrive, is it from
    this plan), then the shared rules of ``judge.judge_shard``, the same ones ``run`` ended with."""
    planned = plan.shard(index).items
    judgement = _judge_arrival(plan, digest, index, artifact)
    if not planned and plan.skipped_by_diff and judgement.status is ShardStatus.EMPTY:
        # the change selected nothing for it: its items are accounted as skipped by the diff
        reason = f"the change selected no items for it ({len(plan.skipped_by_diff)} skipped by the diff)"
        return Judgement(status=ShardStatus.SKIPPED_BY_DIFF, reason=reason)
    return judgement


def _judge_arrival(plan: Plan, digest: str, index: int, artifact: ShardArtifact | None) -> Judgement:
    planned = plan.shard(index).items
    if artifact is None:
        if not planned:
            # nothing was planned, so nothing can be lost: a leg skipped on an empty plan is not a failure
            return Judgement(status=ShardStatus.EMPTY, reason="no items planned (no artifact needed)")
        return Judgement(
            status=ShardStatus.NEVER_STARTED, reason="no artifact folder arrived for this shard", counts=False
        )
    outcome = artifact.outcome
    if outcome is None:
        return Judgement(status=ShardStatus.ERROR, reason=artifact.problem, counts=False)
    if outcome.plan_digest != digest or outcome.shard_total != plan.total:
        reason = (
            f"results are from another plan (digest {outcome.plan_digest[:19]}…, shard {index}/"
            f"{outcome.shard_total}; this plan is {digest[:19]}…, {plan.total} shards)"
        )
        return Judgement(status=ShardStatus.ERROR, reason=reason, counts=False)
    return judge_shard(
        planned=planned,
        reported=outcome.status,
        reason=outcome.reason,
        cases=artifact.cases,
        junit_error=artifact.junit_error,
        accounted=outcome.accounted,
    )


# --------------------------------------------------------------------------------------------
# accounting


def _account(plan: Plan, results: Sequence[ShardResult], not_run: Iterable[str]) -> tuple[Accounting, set[int]]:
    file_plan = plan.granularity is Granularity.FILE
    expected = {
        item: shard.index
        for shard in plan.shards
        for item in shard.items
        if results[shard.index - 1].status is not ShardStatus.SKIPPED_BY_DIFF
    }
    planned = set(expected)
    seen_items: set[str] = set()
    owner_shards: dict[str, set[int]] = defaultdict(set)
    test_shards: dict[str, set[int]] = defaultdict(set)
    unplanned: dict[str, int] = {}
    # judge.judge_shard decided which shards are unverified: none of their tests belongs to their items
    unverified = {result.index for result in results if not result.verified}
    for result in results:
        # the runner writes a shard-level problem (no report, crash) as a case of class "ci-shards":
        # it is reported as a failure, but it is not a test, so it is neither planned nor unplanned
        cases = [c for c in result.cases if not is_shard_case(c) and not _collector_of_parts(c, plan, result.index)]
        owners = [owning_item(c.test_id, planned) for c in cases]
        for case, owner in zip(cases, owners, strict=True):
            test_shards[case.test_id].add(result.index)
            if owner is None:
                unplanned.setdefault(item_file(case.test_id) if file_plan else case.test_id, result.index)
            else:
                seen_items.add(owner)
                owner_shards[owner].add(result.index)
    missing = dict.fromkeys(i for i in expected if i not in seen_items)
    missing.update(dict.fromkeys(i for i in not_run if i in planned))
    if file_plan:
        duplicated = [item for item, shards in owner_shards.items() if len(shards) > 1]
    else:
        # in more than one shard; one shard may run a node id more than once, as pytest does when items share
        # it (pyyaml 6.0.4's three tests/legacy_tests/test_yaml.py::test_yaml.py)
        duplicated = [test_id for test_id, shards in test_shards.items() if len(shards) > 1]
    accounting = Accounting(
        unit="file" if file_plan else "test",
        planned=len(plan.items),
        missing=tuple(missing),
        duplicated=tuple(sorted(duplicated)),
        unplanned=tuple(sorted(unplanned)),
        unverified_shards=tuple(sorted(unverified)),
        unplanned_shard=unplanned,
    )
    return accounting, unverified


def _counted_cases(plan: Plan, results: Sequence[ShardResult]) -> Iterator[CaseResult]:
    """Every shard's cases, with a collector of a cut file that each shard holding a part reported (its collection
    error) counted as the first shard that told it counts it, as plain pytest counts it: once, or twice for a file
    skipped as a doctest module and as a test module (--doctest-modules)."""
    told: dict[str, int] = {}  # the collector's id -> the shard that told it
    for result in results:
        for case in result.cases:
            of_parts = _collector_of_parts(case, plan, result.index)
            if of_parts and told.setdefault(case.test_id, result.index) != result.index:
                continue
            yield case


def _collector_of_parts(case: CaseResult, plan: Plan, shard: int) -> bool:
    """Whether ``case`` is a collector that failed to collect or skipped, in a file this shard planned parts of (the
    plan cut it), none of which is the collector or covers it: the file itself, or a class in it. Each shard holding a
    part collects the whole file and reports it, which is neither a test no item planned nor one run twice. A failed
    one's parts are missing, each saying what failed to collect (``run.classify``); a skipped one's are left out,
    as the plugin says of them."""
    if case.type not in (COLLECTION_ERROR_TYPE, COLLECTOR_SKIPPED_TYPE):
        return False
    items = plan.shard(shard).items
    if owning_item(case.test_id, frozenset(items)) is not None:
        return False
    file = item_file(case.test_id)
    return any(item_file(i) == file and i != file for i in items)


# --------------------------------------------------------------------------------------------
# failures


def _case_record(shard: int, case: CaseResult, kind: FailureKind) -> FailureRecord:
    if case.flaky:
        first = next(a for a in case.attempts if a.outcome.is_bad)
        message, text = first.message, first.text
    else:
        message, text = case.message, case.text
    return FailureRecord(
        shard=shard,
        test_id=case.test_id,
        kind=kind,
        message=message or case.type or kind.value,
        file=case.file or item_file(case.test_id),
        classname=case.classname,
        name=case.name,
        text=text,
        attempts=1 + len(case.attempts),
        duration=case.time,
    )


def _shard_failures(result: ShardResult, artifact: ShardArtifact | None, total: int) -> list[FailureRecord]:
    records: list[FailureRecord] = []
    # the runner's own records count whenever its folder is from this plan (even when junit.xml is
    # unreadable, they still name the failed tests); never from another plan's or an unreadable outcome
    if artifact is not None and artifact.failures is not None and result.status is not ShardStatus.ERROR:
        records.extend(r for r in artifact.failures if r.shard == result.index)
    known_ids = {r.test_id for r in records}
    for case in result.cases:
        kind = failure_kind(case)
        if kind is not None and case.test_id not in known_ids:
            records.append(_case_record(result.index, case, kind))
    # a shard that failed only because tests failed is explained by those tests' records
    explained = result.status is ShardStatus.FAILED and any(c.outcome.is_bad for c in result.cases)
    if not result.status.is_success and not explained and not any(r.kind is FailureKind.SHARD for r in records):
        records.append(
            FailureRecord(
                shard=result.index,
                test_id=f"shard {result.index}/{total}",
                kind=FailureKind.SHARD,
                message=f"{result.status.value}: {result.reason}",
            )
        )
    return records


# --------------------------------------------------------------------------------------------
# the verdict


def decide(
    plan: Plan,
    artifacts: Sequence[ShardArtifact],
    *,
    flaky_result: FlakyResult = FlakyResult.PASS,
    allow_empty: bool = False,
    excused: Collection[str] = frozenset(),
) -> Verdict:
    """The verdict of a run: pure, from the plan and what was read from the shard folders. A plan with
    no items, or a run in which no test executed, fails unless ``allow_empty``. The failures of the
    ``excused`` tests (quarantined, or known with ``--fail-on new``: ``triage.py``) are reported but
    fail neither the run nor a shard that failed only because of them.

    The steps (docs/rules.md): one folder per shard, each shard judged, every planned item accounted
    for, the failures recorded (missing items included), then the run's reasons."""
    digest = plan.digest  # a property that hashes the whole plan: compute it once
    chosen, ignored, stray = _choose(plan, digest, artifacts)
    results: list[ShardResult] = []
    not_run: list[str] = []
    for shard in plan.shards:
        result, shard_not_run = _shard_result(plan, digest, shard, chosen.get(shard.index), ignored)
        results.append(result)
        not_run.extend(shard_not_run)
    accounting, unverified = _account(plan, results, not_run)
    failures: list[FailureRecord] = []
    for result in results:
        failures.extend(_shard_failures(result, chosen.get(result.index), plan.total))
    owner_of = {item: shard.index for shard in plan.shards for item in shard.items}
    failures.extend(_missing_records(accounting.missing, owner_of, unverified, failures))
    totals = Totals.of(_counted_cases(plan, results))
    split = split_dependencies([(r.index, r.cases) for r in results])
    return Verdict(
        plan_digest=digest,
        total_shards=plan.total,
        granularity=plan.granularity,
        shards=tuple(results),
        accounting=accounting,
        failures=tuple(failures),
        totals=totals,
        lower_bound_seconds=plan.lower_bound_seconds,
        workers=plan.workers,
        unknown_items=plan.unknown_items,
        estimated_makespan=plan.estimated_makespan + (plan.shard_overhead_seconds if plan.items else 0.0),
        flaky_result=flaky_result,
        notes=(*stray, *_left_out_notes(c for r in results for c in r.cases), *split_notes(split)),
        reasons=tuple(
            _reasons(results, accounting, totals, flaky_result, _empty(plan, results, allow_empty), excused=excused)
            + ([split_reason(split)] if split else [])
        ),
        item_seconds=_item_seconds(results, set(owner_of)),
        selection=selection_report(plan, (c for r in results if r.verified for c in r.cases)),
    )


def _shard_result(
    plan: Plan, digest: str, shard: ShardPlan, artifact: ShardArtifact | None, ignored: Mapping[int, Sequence[str]]
) -> tuple[ShardResult, Sequence[str]]:
    """One planned shard judged from its chosen folder, and the items its runner said it did not run."""
    judgement = _judge_shard(plan, digest, shard.index, artifact)
    counts = judgement.counts
    cases = artifact.cases if counts and artifact is not None and artifact.cases is not None else ()
    notes = list(ignored.get(shard.index, ()))
    if artifact is not None and artifact.failures_error:
        notes.append(artifact.failures_error)
    outcome = artifact.outcome if artifact is not None else None
    result = ShardResult(
        index=shard.index,
        status=judgement.status,
        reason=judgement.reason,
        verified=judgement.verified,
        # what the shard's wall was expected to be: its items plus the fixed overhead
        estimated_seconds=shard.estimated_seconds + (plan.shard_overhead_seconds if shard.items else 0.0),
        elapsed_seconds=outcome.elapsed_seconds if outcome is not None else 0.0,
        planned_items=len(shard.items),
        totals=Totals.of(cases),
        source=str(artifact.path) if artifact is not None else "",
        notes=tuple(notes),
        cases=cases,
        collect_seconds=dict(outcome.collect_seconds) if counts and outcome is not None else {},
        spread=frozenset(shard.spread),
        joined=shard.joined,
    )
    return result, (outcome.not_run if counts and outcome is not None else ())


def _missing_records(
    missing: Iterable[str], owner_of: Mapping[str, int], unverified: Collection[int], failures: Iterable[FailureRecord]
) -> list[FailureRecord]:
    """A not-run record for each missing item that no shard already recorded as not run."""
    recorded = {(r.test_id, r.kind) for r in failures}
    records: list[FailureRecord] = []
    for item in missing:
        if (item, FailureKind.NOT_RUN) not in recorded:
            shard_index = owner_of[item]
            records.append(
                FailureRecord(
                    shard=shard_index,
                    test_id=item,
                    kind=FailureKind.NOT_RUN,
                    message=_UNVERIFIED_MISSING.format(index=shard_index)
                    if shard_index in unverified
                    else "planned but never reported by any shard",
                    file=item_file(item),
                )
            )
    return records


def _item_seconds(results: Iterable[ShardResult], planned_items: Collection[str]) -> dict[str, float]:
    """Each planned item's measured seconds, from verified shards only (for the timings write-back)."""
    item_seconds: dict[str, float] = {}
    for result in results:
        if not result.verified:
            continue
        for case in result.cases:
            owner = owning_item(case.test_id, planned_items)
            if owner is not None and case.counted_as not in UNMEASURED:
                seconds = math.nan if case.time_invalid else case.time  # the store skips the item's sum
                item_seconds[owner] = item_seconds.get(owner, 0.0) + seconds
    return item_seconds


def _left_out_notes(cases: Iterable[CaseResult]) -> list[str]:
    """Planned items the shards' pytest did not collect by the project's own rules: a note each
    (the first five, then a count), never a test in the counts (``model.outcome.LEFT_OUT_TYPE``)."""
    left_out = [c for c in cases if c.counted_as == LEFT_OUT]
    notes = [f"not a test: {c.test_id} — {c.message}" for c in left_out[:5]]
    if len(left_out) > 5:
        notes.append(f"not tests: {len(left_out) - 5} more planned items left out the same way")
    return notes


_UNVERIFIED_MISSING = "planned but never reported: shard {index}'s results could not be matched to plan items"


def _empty(plan: Plan, results: Sequence[ShardResult], allow_empty: bool) -> str:
    if not plan.items and plan.skipped_by_diff:
        return ""  # the change selected nothing: every item is accounted for as skipped-by-diff
    executed = sum(
        1
        for result in results
        for case in result.cases
        if not is_shard_case(case) and case.outcome is not CaseOutcome.SKIPPED and case.type not in SYNTHESISED_TYPES
    )
    # told only when no test executed: not a second walk of every case in every aggregate
    deselected = (
        sum(
            1
            for result in results
            for case in result.cases
            if case.counted_as == LEFT_OUT and case.message == DESELECTED_MESSAGE
        )
        if executed == 0
        else 0
    )
    return empty_run_reason(
        planned_items=len(plan.items), executed_tests=executed, allow_empty=allow_empty, deselected=deselected
    )


def _excused_only(result: ShardResult, excused: Collection[str]) -> bool:
    """A shard that failed only because tests failed, every one of them excused."""
    bad = [c.test_id for c in result.cases if c.outcome.is_bad]
    return result.status is ShardStatus.FAILED and bool(bad) and all(t in excused for t in bad)


def _reasons(
    results: Sequence[ShardResult],
    accounting: Accounting,
    totals: Totals,
    flaky_result: FlakyResult,
    empty: str,
    *,
    excused: Collection[str] = frozenset(),
) -> list[str]:
    reasons: list[str] = [empty] if empty else []
    # known, flaky and quarantined failures under --fail-on new do not fail the run: counted as Totals counts
    excused_totals = Totals.of(c for r in results for c in r.cases if c.test_id in excused)
    failed, errors = totals.failed - excused_totals.failed, totals.errors - excused_totals.errors
    if failed or errors:
        reasons.append(count_failures(failed, errors))
    bad_shards = [r for r in results if not r.status.is_success and not _excused_only(r, excused)]
    if bad_shards:
        listed = ", ".join(f"#{r.index} {r.status.value}" for r in bad_shards[:10])
        more = f" and {len(bad_shards) - 10} more" if len(bad_shards) > 10 else ""
        of = plural(len(results), "shard")
        reasons.append(f"{len(bad_shards)} of {of} did not pass ({listed}{more})")
    unit = accounting.unit
    if accounting.unverified_shards:
        listed = ", ".join(f"#{i}" for i in accounting.unverified_shards)
        shards = "shard" if len(accounting.unverified_shards) == 1 else "shards"
        reasons.append(f"results of {shards} {listed} could not be matched to plan items")
    if accounting.missing:
        reasons.append(f"{plural(len(accounting.missing), 'planned ' + unit)} never ran")
    if accounting.duplicated:
        reasons.append(f"{plural(len(accounting.duplicated), unit)} ran more than once")
    if totals.flaky and flaky_result is FlakyResult.FAIL:
        reasons.append(f"{plural(totals.flaky, 'flaky test')} (--flaky-result fail)")
    return reasons


def aggregate_dirs(
    plan: Plan, dirs: Sequence[Path], *, flaky_result: FlakyResult = FlakyResult.PASS, allow_empty: bool = False
) -> Verdict:
    """Find and read every shard folder under ``dirs``, then decide. Raises ``InputError`` only for a
    directory that does not exist; every problem inside the folders is part of the verdict."""
    artifacts = read_shard_folders([Path(d) for d in dirs])
    return decide(plan, artifacts, flaky_result=flaky_result, allow_empty=allow_empty)
