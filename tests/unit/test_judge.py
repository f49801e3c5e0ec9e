"""The shared shard rules (judge.py), the typed runner facts and the plan checks on load (issue 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_shards.common.errors import InputError
from ci_shards.common.facts import RunnerFacts
from ci_shards.judge import (
    UNVERIFIED,
    FlakyResult,
    empty_plan_message,
    empty_run_reason,
    failure_kind,
    judge_shard,
)
from ci_shards.model.failures import FailureKind
from ci_shards.model.outcome import Attempt, CaseOutcome, Outcome, ShardStatus
from ci_shards.model.planfile import load_plan
from ci_shards.report.artifacts import read_shard_folder
from ci_shards.run.shard_output import runner_facts, write_outcome
from tests.unit.aggregate_fixtures import case_for, make_plan


def test_flaky_result_and_the_shard_classname_are_defined_once() -> None:
    import ci_shards.report.aggregate as aggregate_mod  # noqa: PLC0415
    import ci_shards.report.verdict as verdict_mod  # noqa: PLC0415
    import ci_shards.run.classify as classify_mod  # noqa: PLC0415

    assert classify_mod.FlakyResult is FlakyResult is verdict_mod.FlakyResult is aggregate_mod.FlakyResult
    assert not hasattr(classify_mod, "SHARD_CLASSNAME")


def test_tests_that_name_none_of_the_planned_items_fail_the_shard_unverified() -> None:
    judged = judge_shard(
        planned=["a.py", "b.py"], reported=ShardStatus.PASSED, reason="", cases=[case_for("zzz.py::test_z")]
    )
    assert (judged.status, judged.verified) == (ShardStatus.FAILED, False)
    assert judged.reason == UNVERIFIED.format(planned="2 planned items")
    # judging the folder again (aggregate after run) changes nothing, not even the reason
    again = judge_shard(
        planned=["a.py", "b.py"], reported=judged.status, reason=judged.reason, cases=[case_for("zzz.py::test_z")]
    )
    assert again == judged


@pytest.mark.parametrize(
    ("planned", "reported", "cases", "status"),
    [
        (["t.py::test_a"], ShardStatus.PASSED, ["t.py::test_a[x::y]"], ShardStatus.PASSED),
        (["t.py"], ShardStatus.PASSED, ["t.py::TestK::test_m[1]"], ShardStatus.PASSED),
        (["t.py"], ShardStatus.PASSED, [], ShardStatus.FAILED),  # planned items, no tests
        (["t.py"], ShardStatus.EMPTY, ["t.py::test_a"], ShardStatus.FAILED),  # empty although planned
        ([], ShardStatus.EMPTY, [], ShardStatus.EMPTY),
        ([], ShardStatus.PASSED, ["t.py::test_a"], ShardStatus.FAILED),  # ran tests it was never given
        (["t.py"], ShardStatus.TIMED_OUT, ["t.py::test_a"], ShardStatus.TIMED_OUT),
    ],
)
def test_judge_shard_rules(planned: list[str], reported: ShardStatus, cases: list[str], status: ShardStatus) -> None:
    judged = judge_shard(planned=planned, reported=reported, reason="", cases=[case_for(c) for c in cases])
    assert judged.status is status, judged.reason


def test_a_failed_test_fails_a_shard_that_reported_passed() -> None:
    judged = judge_shard(
        planned=["t.py"], reported=ShardStatus.PASSED, reason="", cases=[case_for("t.py::x", CaseOutcome.FAILED)]
    )
    assert (judged.status, judged.reason) == (ShardStatus.FAILED, "1 test failed although the runner reported passed")


def test_exit_code_only_shard_keeps_its_status_and_missing_junit_fails_a_success() -> None:
    judged = judge_shard(
        planned=["t.py"], reported=ShardStatus.PASSED, reason="accounting impossible", cases=[], accounted=False
    )
    assert judged.status is ShardStatus.PASSED
    absent = judge_shard(planned=["t.py"], reported=ShardStatus.PASSED, reason="", cases=None)
    assert absent.status is ShardStatus.FAILED
    unreadable = judge_shard(planned=["t.py"], reported=ShardStatus.PASSED, reason="", cases=None, junit_error="bad")
    assert (unreadable.status, unreadable.counts) == (ShardStatus.FAILED, False)


def test_failure_kinds() -> None:
    flaky = case_for("t.py::a", attempts=(Attempt(outcome=CaseOutcome.FAILED),))
    assert failure_kind(flaky) is FailureKind.FLAKY
    assert failure_kind(case_for("t.py::a")) is None
    assert failure_kind(case_for("t.py::a", CaseOutcome.ERROR, type="not-run")) is FailureKind.NOT_RUN
    assert failure_kind(case_for("t.py::a", CaseOutcome.ERROR, type="timed-out")) is FailureKind.TIMED_OUT
    assert failure_kind(case_for("t.py::a", CaseOutcome.ERROR)) is FailureKind.ERROR
    assert failure_kind(case_for("t.py::a", CaseOutcome.FAILED)) is FailureKind.FAILED


def test_empty_run_reason() -> None:
    assert empty_run_reason(planned_items=0, executed_tests=0, allow_empty=False).startswith("no tests")
    assert empty_run_reason(planned_items=3, executed_tests=0, allow_empty=False).startswith("no tests ran")
    assert empty_run_reason(planned_items=3, executed_tests=1, allow_empty=False) == ""
    assert empty_run_reason(planned_items=0, executed_tests=0, allow_empty=True) == ""


def test_an_empty_plan_or_run_made_by_deselection_says_so() -> None:
    deselected = empty_run_reason(planned_items=2, executed_tests=0, allow_empty=False, deselected=5)
    said = "no tests ran: 2 items were planned, but -k/-m deselected 5 planned tests and no other test ran"
    assert deselected == said
    assert "nothing was collected" in empty_plan_message("the plan")
    assert '(pytest collected 3 tests and deselected every one: "3 deselected")' in empty_plan_message(
        "the plan", deselected=3
    )


# ---- runner facts


def test_runner_facts_written_by_the_runner_are_read_back_by_aggregate(tmp_path: Path) -> None:
    # issue 8: the runner wrote ci_run_attempt and aggregate read run_attempt, so attempt 2 read back as 0
    plan = make_plan([["t.py::a"]])
    facts = runner_facts({"GITHUB_RUN_ATTEMPT": "2", "GITHUB_RUN_ID": "77"}, subreaper=True, problems=["x"])
    outcome = Outcome(plan_digest=plan.digest, shard_index=1, shard_total=1, status=ShardStatus.PASSED, runner=facts)
    folder = tmp_path / "shard-1-of-1"
    folder.mkdir()
    write_outcome(folder, outcome, [])
    artifact = read_shard_folder(folder)
    assert artifact.run_attempt == 2
    assert artifact.outcome is not None and artifact.outcome.runner == facts
    assert json.loads((folder / "outcome.json").read_text())["runner"]["ci_run_attempt"] == 2


@pytest.mark.parametrize(
    ("raw", "attempt"), [({"run_attempt": 3}, 3), ({"ci_run_attempt": "4"}, 4), ({"ci_run_attempt": ""}, 0), ({}, 0)]
)
def test_runner_facts_read_the_old_key_and_tolerate_blanks(raw: dict[str, object], attempt: int) -> None:
    assert RunnerFacts.from_json(raw).ci_run_attempt == attempt


def test_runner_facts_round_trip() -> None:
    facts = RunnerFacts(
        ci_shards="1",
        os="Linux",
        python="3.12",
        hostname="h",
        ci_run_id="9",
        ci_run_attempt=2,
        subreaper=True,
        problems=("p",),
    )
    assert RunnerFacts.from_json(json.loads(json.dumps(facts.to_json()))) == facts


# ---- plans


def _plan_json(shards: list[list[str]]) -> dict[str, object]:
    """plan.json with a correct digest whatever the shards hold, as a hand edit that recomputed it leaves it."""
    return make_plan(shards).to_json()  # the constructor checks nothing: loading does


@pytest.mark.parametrize(
    ("shards", "message"),
    [
        ([["a.py", "b.py"], ["b.py"]], "item 'b.py' is in shards 1 and 2"),
        ([["a.py", "a.py"]], "item 'a.py' is in shard 1 twice"),
    ],
)
def test_a_plan_with_an_item_twice_is_refused_on_load(tmp_path: Path, shards: list[list[str]], message: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(_plan_json(shards)), encoding="utf-8")
    with pytest.raises(InputError, match=message) as caught:
        load_plan(path)
    assert caught.value.exit_code == 2


def test_a_plan_whose_shard_indexes_skip_one_is_refused(tmp_path: Path) -> None:
    data = _plan_json([["a.py"], ["b.py"]])
    data["shards"][1]["index"] = 3  # type: ignore[index]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match=r"shards 1\.\.2"):
        load_plan(path)
