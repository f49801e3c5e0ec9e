import dataclasses
import json

import pytest

from ci_shards.model.outcome import CaseOutcome, Outcome, ShardStatus
from ci_shards.model.plan import Granularity, Plan, ShardPlan, parse_shard_spec, pick_unowned_shard


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


def _shards(*specs: tuple[tuple[str, ...], float]) -> tuple[ShardPlan, ...]:
    return tuple(ShardPlan(i, items, seconds) for i, (items, seconds) in enumerate(specs, 1))


def test_the_unowned_shard_is_the_non_empty_one_with_the_smallest_estimate():
    assert pick_unowned_shard(_shards((("a.py",), 3.0), (("b.py",), 1.0), (("c.py",), 2.0))) == 2
    assert pick_unowned_shard(_shards((("a.py",), 1.0), (("b.py",), 1.0))) == 1  # tie: lowest index
    assert pick_unowned_shard(_shards((("a.py",), 2.0), ((), 0.0))) == 1  # an empty shard is never run
    assert pick_unowned_shard(_shards(((), 0.0), ((), 0.0))) == 0
    # compared as written to plan.json (3 decimals), so the choice survives a round trip
    assert pick_unowned_shard(_shards((("a.py",), 1.0004), (("b.py",), 1.0001))) == 1


def test_every_test_has_exactly_one_shard_planned_or_not():
    plan = Plan(
        total=3,
        granularity=Granularity.TEST,
        shards=_shards(
            (("t/a.py::test_1", "t/b.py::test_q"), 5.0),
            (("t/a.py::test_2", "t/a.py::TestK"), 4.0),
            (("t/c.py::test_x",), 1.0),
        ),
        lower_bound_seconds=1.0,
        unknown_items=0,
        unowned_shard=3,
    )
    own = plan.ownership()
    assert own.shard_of("t/a.py::test_2") == 2
    assert own.shard_of("t/b.py::test_q[a::b/c]") == 1  # a function item covers its parametrized cases
    assert own.shard_of("t/a.py::TestK::test_m[1]") == 2
    assert own.planned_shard("t/a.py::test_new") is None
    assert own.shard_of("t/a.py::test_new") == 1  # a file split across shards: the lowest owns it
    assert own.shard_of("t/c.py::test_new") == 3
    assert own.shard_of("t/new.py::test_new") == 3  # no shard owns the file: the plan's unowned shard
    older = Plan.from_json({k: v for k, v in json.loads(plan.dumps()).items() if k not in ("unowned_shard", "digest")})
    assert older.unowned_shard == 0
    assert older.ownership().unowned_shard == 3  # a plan from before the field: the same rule


def test_unowned_shard_is_covered_by_the_digest_and_absent_plans_keep_theirs():
    plan = _plan()
    data = json.loads(plan.dumps())
    assert "unowned_shard" not in data  # 0: a plan from before the field has the same bytes and digest
    chosen = dataclasses.replace(plan, unowned_shard=2)
    data = json.loads(chosen.dumps())
    assert data["unowned_shard"] == 2
    assert chosen.digest != plan.digest
    data["unowned_shard"] = 1
    with pytest.raises(ValueError, match="digest"):
        Plan.from_json(data)
    data["unowned_shard"] = 3
    data.pop("digest")
    with pytest.raises(ValueError, match=r"'unowned_shard' is 3, not a shard of 1\.\.2"):
        Plan.from_json(data)
