import json

import pytest

from ci_shards.model import (
    CaseOutcome,
    Granularity,
    Outcome,
    Plan,
    ShardPlan,
    ShardStatus,
    parse_shard_spec,
)


def _plan(created_at: str = "2026-01-01T00:00:00Z") -> Plan:
    return Plan(
        total=2,
        granularity=Granularity.FILE,
        shards=(ShardPlan(1, ("a.py",), 1.5), ShardPlan(2, ("b.py", "c.py"), 1.25)),
        lower_bound_seconds=1.375,
        unknown_items=0,
        created_at=created_at,
    )


def test_plan_round_trips_and_digest_ignores_created_at():
    plan = _plan()
    again = Plan.from_json(json.loads(plan.dumps()))
    assert again == plan
    assert _plan("2030-05-05T00:00:00Z").digest == plan.digest
    assert plan.digest.startswith("sha256:")


def test_plan_with_edited_items_is_rejected():
    data = json.loads(_plan().dumps())
    data["shards"][0]["items"].append("evil.py")
    with pytest.raises(ValueError, match="digest"):
        Plan.from_json(data)


def test_plan_shards_must_be_complete():
    data = _plan().to_json()
    data["shards"] = data["shards"][:1]
    del data["digest"]
    with pytest.raises(ValueError, match=r"shards 1\.\.2"):
        Plan.from_json(data)


@pytest.mark.parametrize(
    ("spec", "reason"),
    [("0/4", "between 1 and 4"), ("5/4", "between 1 and 4"), ("2/0", "at least 1"), ("x", "form I/N")],
)
def test_bad_shard_specs_say_why(spec, reason):
    with pytest.raises(ValueError, match=reason):
        parse_shard_spec(spec)


def test_shard_spec():
    assert parse_shard_spec("3/4") == (3, 4)


def test_status_success_set():
    assert {s for s in ShardStatus if s.is_success} == {
        ShardStatus.PASSED,
        ShardStatus.EMPTY,
        ShardStatus.SKIPPED_BY_DIFF,
    }


def test_outcome_round_trip():
    outcome = Outcome(plan_digest="sha256:x", shard_index=1, shard_total=2, status=ShardStatus.TIMED_OUT, signal=2)
    assert Outcome.from_json(json.loads(outcome.dumps())) == outcome


def test_case_severity_order():
    assert sorted(CaseOutcome, key=lambda o: o.severity) == [
        CaseOutcome.SKIPPED,
        CaseOutcome.PASSED,
        CaseOutcome.FAILED,
        CaseOutcome.ERROR,
    ]
