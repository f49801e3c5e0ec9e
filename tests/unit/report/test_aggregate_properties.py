"""Property: whatever subset of planned tests each shard reports (dropped, repeated, or foreign
tests added), the accounting names exactly the missing, duplicated and unplanned ones."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.model.outcome import Outcome, ShardStatus
from ci_shards.report.aggregate import decide
from ci_shards.report.artifacts import ShardArtifact
from tests.unit.aggregate_fixtures import case_for, make_plan

TESTS = [f"tests/test_{f}.py::test_{t}" for f in range(4) for t in range(5)]


@st.composite
def runs(draw):
    shards = draw(st.integers(min_value=1, max_value=4))
    owner = draw(st.lists(st.integers(0, shards - 1), min_size=len(TESTS), max_size=len(TESTS)))
    planned = [[t for t, o in zip(TESTS, owner, strict=True) if o == s] for s in range(shards)]
    reported = []
    for items in planned:
        keep = [t for t in items if draw(st.booleans()) or draw(st.booleans())]  # ~1 in 4 dropped
        repeat = draw(st.lists(st.sampled_from(TESTS), max_size=2))
        foreign = draw(st.lists(st.sampled_from(["tests/test_x.py::test_new", "tests/test_y.py::test_z"]), max_size=1))
        reported.append(keep + repeat + foreign)
    return planned, reported


@settings(max_examples=150, deadline=None)
@given(runs())
def test_accounting_matches_set_arithmetic(run):
    planned, reported = run
    plan = make_plan(planned)
    artifacts = []
    for index, ids in enumerate(reported, 1):
        outcome = Outcome(plan_digest=plan.digest, shard_index=index, shard_total=plan.total, status=ShardStatus.PASSED)
        cases = tuple(case_for(i) for i in ids)
        artifacts.append(
            ShardArtifact(path=Path(f"s{index}"), index=index, total=plan.total, outcome=outcome, cases=cases)
        )
    verdict = decide(plan, artifacts)
    everything = Counter(i for ids in reported for i in ids)
    all_planned = {t for items in planned for t in items}
    mappable = {i for i in everything if i in all_planned}
    acc = verdict.accounting
    # a shard reporting none of its own items is "unverified" (judge.py): it fails, and the set arithmetic holds
    unmatched = {n for n, ids in enumerate(reported, 1) if ids and not any(i in planned[n - 1] for i in ids)}
    assert set(acc.unverified_shards) == unmatched
    assert all(not verdict.shards[n - 1].status.is_success for n in unmatched)
    assert set(acc.missing) == all_planned - mappable
    # ran in more than one shard; a shard may run an id more than once, as pytest does with items that share it
    assert set(acc.duplicated) == {i for i in everything if sum(i in ids for ids in reported) > 1}
    assert set(acc.unplanned) == set(everything) - all_planned
    # each "ran, not planned" test names the first shard that ran it; alone it never fails the run
    assert acc.unplanned_shard == {i: next(n for n, ids in enumerate(reported, 1) if i in ids) for i in acc.unplanned}
    assert verdict.passed == (acc.clean and all(s.status.is_success for s in verdict.shards))
    assert verdict.totals.tests == sum(len(ids) for ids in reported)
