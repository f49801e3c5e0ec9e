"""The verdict across shards, from real artifact folders on disk (fault tests of issue 4)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from ci_shards.common.errors import InputError
from ci_shards.model.failures import FailureKind
from ci_shards.model.matching import owning_item
from ci_shards.model.outcome import (
    COLLECTOR_SKIPPED_TYPE,
    SKIPPED_AT_COLLECTION,
    CaseOutcome,
    CaseResult,
    ShardStatus,
)
from ci_shards.model.plan import Granularity
from ci_shards.report.aggregate import FlakyResult, aggregate_dirs
from ci_shards.report.render import render_summary, render_terminal
from tests.unit.aggregate_fixtures import case_for, flaky_case, make_plan, write_all, write_shard

ITEMS = [
    ["tests/test_a.py::test_one", "tests/test_a.py::test_two"],
    ["tests/test_b.py::TestK::test_x", "tests/test_b.py::test_p[1]"],
    ["tests/test_c.py::test_only"],
]


@pytest.fixture
def plan():
    return make_plan(ITEMS)


def test_clean_run_passes(tmp_path, plan):
    write_all(tmp_path, plan)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 0, verdict.reasons
    assert [s.status for s in verdict.shards] == [ShardStatus.PASSED] * 3
    assert verdict.totals.tests == 5
    assert verdict.accounting.clean
    assert verdict.failures == ()
    assert sorted(c.test_id for c in verdict.cases) == sorted(i for s in ITEMS for i in s)
    assert "PASSED" in render_terminal(verdict)


def test_missing_shard_folder_is_never_started_and_its_items_missing(tmp_path, plan):
    write_shard(tmp_path, plan, 1)
    write_shard(tmp_path, plan, 3)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 1
    assert verdict.shards[1].status is ShardStatus.NEVER_STARTED
    assert verdict.shards[0].status is ShardStatus.PASSED  # everything else still reported
    assert verdict.totals.tests == 3
    assert set(verdict.accounting.missing) == set(ITEMS[1])
    kinds = {(r.shard, r.kind) for r in verdict.failures}
    assert (2, FailureKind.SHARD) in kinds
    assert (2, FailureKind.NOT_RUN) in kinds
    text = render_terminal(verdict)
    assert "never-started" in text
    assert "tests/test_b.py::TestK::test_x" in text


def test_corrupt_junit_fails_that_shard_only(tmp_path, plan):
    write_all(tmp_path, plan)
    (tmp_path / "shard-3-of-3" / "junit.xml").write_text("<testsuites><testcase name='x'", encoding="utf-8")
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 1
    third = verdict.shards[2]
    assert third.status is ShardStatus.FAILED
    assert "junit.xml is unreadable" in third.reason
    assert "line 1" in third.reason
    assert verdict.accounting.missing == ("tests/test_c.py::test_only",)
    assert verdict.shards[0].status is ShardStatus.PASSED
    assert verdict.totals.tests == 4
    kinds = {(r.test_id, r.kind) for r in verdict.failures}
    assert ("shard 3/3", FailureKind.SHARD) in kinds
    assert ("tests/test_c.py::test_only", FailureKind.NOT_RUN) in kinds


def test_corrupt_junit_keeps_the_runners_failure_records(tmp_path, plan):
    write_all(tmp_path, plan)
    write_shard(tmp_path, plan, 3, [case_for(ITEMS[2][0], CaseOutcome.FAILED)])
    (tmp_path / "shard-3-of-3" / "junit.xml").write_bytes(b"")
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.shards[2].status is ShardStatus.FAILED
    assert "empty file" in verdict.shards[2].reason
    assert (ITEMS[2][0], FailureKind.FAILED) in {(r.test_id, r.kind) for r in verdict.failures}


def test_outcome_from_another_plan_is_error(tmp_path, plan):
    write_all(tmp_path, plan)
    write_shard(tmp_path, plan, 2, digest="sha256:" + "0" * 64)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 1
    assert verdict.shards[1].status is ShardStatus.ERROR
    assert "another plan" in verdict.shards[1].reason
    assert set(verdict.accounting.missing) == set(ITEMS[1])  # its results do not count
    assert verdict.totals.tests == 3


def test_unreadable_outcome_is_error(tmp_path, plan):
    write_all(tmp_path, plan)
    (tmp_path / "shard-1-of-3" / "outcome.json").write_text("{not json", encoding="utf-8")
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.shards[0].status is ShardStatus.ERROR
    assert "outcome.json is unreadable" in verdict.shards[0].reason
    assert verdict.exit_code == 1


def test_duplicate_attempt_latest_counts_and_earlier_is_noted(tmp_path, plan):
    # download-artifact without merge-multiple: one folder per artifact, named with the run attempt
    for shard in (1, 3):
        write_shard(tmp_path / f"ci-shards-shard-{shard}-of-3-a1", plan, shard)
    failing = [case_for(ITEMS[1][0], CaseOutcome.FAILED), case_for(ITEMS[1][1])]
    write_shard(tmp_path / "ci-shards-shard-2-of-3-a1", plan, 2, failing, attempt=1)
    write_shard(tmp_path / "ci-shards-shard-2-of-3-a2", plan, 2, attempt=2)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 0, verdict.reasons
    second = verdict.shards[1]
    assert "a2" in second.source
    assert len(second.notes) == 1
    assert "attempt 1" in second.notes[0]
    assert "ignored" in second.notes[0]
    assert verdict.accounting.duplicated == ()


def test_latest_attempt_counts_even_when_it_is_unreadable(tmp_path, plan):
    for shard in (1, 3):
        write_shard(tmp_path / f"ci-shards-shard-{shard}-of-3-a1", plan, shard)
    a1 = write_shard(tmp_path / "ci-shards-shard-2-of-3-a1", plan, 2, attempt=1)
    a2 = write_shard(tmp_path / "ci-shards-shard-2-of-3-a2", plan, 2, attempt=2)
    (a2 / "outcome.json").write_text("{broken", encoding="utf-8")
    verdict = aggregate_dirs(plan, [tmp_path])
    second = verdict.shards[1]
    assert second.status is ShardStatus.ERROR
    assert "outcome.json is unreadable" in second.reason
    assert second.source == str(a2)
    assert second.notes == (
        f"attempt 1 at {a1} ignored: attempt 2 at {a2} is the latest that counts"
        " (although it is unusable, see the shard's reason)",
    )
    assert set(verdict.accounting.missing) == set(ITEMS[1])
    assert verdict.exit_code == 1


def test_latest_attempt_from_another_plan_is_error_not_replaced(tmp_path, plan):
    for shard in (1, 2):
        write_shard(tmp_path / f"ci-shards-shard-{shard}-of-3-a1", plan, shard)
    write_shard(tmp_path / "ci-shards-shard-3-of-3-a1", plan, 3, attempt=1)
    a2 = write_shard(tmp_path / "ci-shards-shard-3-of-3-a2", plan, 3, attempt=2, digest="sha256:" + "1" * 64)
    verdict = aggregate_dirs(plan, [tmp_path])
    third = verdict.shards[2]
    assert third.status is ShardStatus.ERROR
    assert "another plan" in third.reason
    assert third.source == str(a2)
    assert len(third.notes) == 1 and "attempt 1" in third.notes[0] and "ignored" in third.notes[0]
    assert verdict.exit_code == 1


def test_duplicate_attempt_falls_back_to_folder_suffix_and_finished_at(tmp_path, plan):
    write_all(tmp_path / "a", plan)
    failing = [case_for(i, CaseOutcome.FAILED) for i in ITEMS[0]]
    write_shard(tmp_path / "b", plan, 1, failing, finished_at="2026-11-30T02:00:00Z")
    verdict = aggregate_dirs(plan, [tmp_path / "a", tmp_path / "b"])
    # same attempt: the later finish counts
    assert verdict.shards[0].status is ShardStatus.FAILED
    assert verdict.exit_code == 1


def test_item_missing_from_every_shard(tmp_path, plan):
    write_shard(tmp_path, plan, 1, [case_for(ITEMS[0][0])])
    write_shard(tmp_path, plan, 2)
    write_shard(tmp_path, plan, 3)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 1
    assert verdict.accounting.missing == ("tests/test_a.py::test_two",)
    assert "1 planned test never ran" in verdict.reasons
    # the shard itself exited 0 with fewer tests: the accounting catches it regardless
    assert verdict.totals.tests == 4


def test_duplicated_and_unplanned_tests(tmp_path, plan):
    write_shard(tmp_path, plan, 1)
    write_shard(tmp_path, plan, 2, [*(case_for(i) for i in ITEMS[1]), case_for("tests/test_a.py::test_one")])
    write_shard(tmp_path, plan, 3, [case_for(ITEMS[2][0]), case_for("tests/test_z.py::test_new")])
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.accounting.duplicated == ("tests/test_a.py::test_one",)
    assert verdict.accounting.unplanned == ("tests/test_z.py::test_new",)
    assert verdict.accounting.unplanned_shard == {"tests/test_z.py::test_new": 3}
    assert verdict.accounting.missing == ()
    assert verdict.exit_code == 1
    assert verdict.reasons == ("1 test ran more than once",)  # the unplanned one is listed, not a reason


def test_tests_that_ran_but_were_never_planned_are_listed_with_their_shard_and_do_not_fail(tmp_path, plan):
    # issue 8.5: tests added since the plan ran (in the shard owning their file, or the unowned shard)
    write_shard(tmp_path, plan, 1, [*(case_for(i) for i in ITEMS[0]), case_for("tests/test_a.py::test_added")])
    write_shard(tmp_path, plan, 2)
    write_shard(tmp_path, plan, 3, [case_for(ITEMS[2][0]), case_for("tests/test_new.py::test_brand_new")])
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 0, verdict.reasons
    acc = verdict.accounting
    assert acc.unplanned == ("tests/test_a.py::test_added", "tests/test_new.py::test_brand_new")
    assert acc.unplanned_shard == {"tests/test_a.py::test_added": 1, "tests/test_new.py::test_brand_new": 3}
    assert acc.missing == () and acc.clean
    assert "tests/test_new.py::test_brand_new (shard 3)" in render_terminal(verdict)
    summary = render_summary(verdict)
    heading = "2 tests ran, not planned (new since the plan, or ones it could not name; not a failure)"
    assert f"<details><summary>{heading}</summary>" in summary
    assert "- `tests/test_a.py::test_added` (shard 1)" in summary
    # not "new since the plan" alone: a discovery plan names no test a conftest hook makes (wrapt 2.5.2's 37
    # tests/conftest.py::mypy_* items) nor those a class imported from another file gives (Markdown 3.11.3's 268
    # in tests/test_syntax/extensions/test_md_in_html.py), and they were there when it was made
    assert "tests that ran, not planned (new since the plan, or ones it could not name; not a failure)" in (
        render_terminal(verdict)
    )


def _collector_skip(file: str, module: str) -> CaseResult:
    """A test module skipped at collection (its importorskip of ``module``), as a shard reports it."""
    message = f"{SKIPPED_AT_COLLECTION}could not import {module!r}"
    return CaseResult(
        test_id=file, name=file, file=file, outcome=CaseOutcome.SKIPPED, type=COLLECTOR_SKIPPED_TYPE, message=message
    )


def test_a_module_skipped_at_collection_that_ran_unplanned_is_said_so(tmp_path, plan):
    # tqdm 4.70.1's tests_pandas.py (importorskip('numpy')): a --pytest plan's collection gives it no test, the shard
    # that walks unowned files reports its skip (one skipped test, as pytest counts it): listed as such, not only
    # under "new since the plan"
    skip = _collector_skip("tests/test_np.py", "numpy")
    write_shard(tmp_path, plan, 1)
    write_shard(tmp_path, plan, 2, [*(case_for(i) for i in ITEMS[1]), skip])
    write_shard(tmp_path, plan, 3, [case_for(ITEMS[2][0]), case_for("tests/test_new.py::test_brand_new")])
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 0, verdict.reasons
    assert verdict.accounting.unplanned == ("tests/test_new.py::test_brand_new", "tests/test_np.py")
    terminal = render_terminal(verdict)
    assert "tests/test_np.py (shard 2, skipped at collection)" in terminal
    assert "tests/test_new.py::test_brand_new (shard 3)\n" in terminal
    assert "- `tests/test_np.py` (shard 2, skipped at collection)" in render_summary(verdict)


def test_a_cut_files_collector_skipped_twice_is_counted_as_one_shard_tells_it(tmp_path):
    # --doctest-modules: pytest skips a test file that importorskips as a doctest module and as a test module, two
    # skipped tests; a plan that cut the file has each shard holding a part report both, counted once per collector
    # (2 skipped, as plain pytest says), not once in all (networkx 3.6.1's importorskip modules, conformance run 12)
    plan = make_plan([["tests/test_sp.py::test_one"], ["tests/test_sp.py::test_two"], ["tests/test_c.py::test_only"]])
    skip = _collector_skip("tests/test_sp.py", "scipy")
    write_shard(tmp_path, plan, 1, [skip, skip])
    write_shard(tmp_path, plan, 2, [skip, skip])
    write_shard(tmp_path, plan, 3)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.totals.skipped == 2
    assert verdict.accounting.duplicated == ()


def test_parametrised_and_class_items_are_accounted(tmp_path):
    plan = make_plan([["tests/test_a.py::test_p", "tests/test_a.py::TestK"], ["tests/test_b.py"]])
    write_shard(
        tmp_path,
        plan,
        1,
        [
            case_for("tests/test_a.py::test_p[1]"),
            case_for("tests/test_a.py::test_p[2]"),
            case_for("tests/test_a.py::TestK::test_m"),
        ],
    )
    write_shard(tmp_path, plan, 2, [case_for("tests/test_b.py::test_q")])
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.accounting.clean
    assert verdict.exit_code == 0


def test_file_plan_reports_per_file(tmp_path):
    plan = make_plan([["tests/test_a.py"], ["tests/test_b.py", "tests/test_c.py"]], Granularity.FILE)
    write_shard(tmp_path, plan, 1, [case_for("tests/test_a.py::t1"), case_for("tests/test_b.py::t9")])
    write_shard(tmp_path, plan, 2, [case_for("tests/test_b.py::t1"), case_for("tests/test_d.py::t1")])
    verdict = aggregate_dirs(plan, [tmp_path])
    acc = verdict.accounting
    assert acc.unit == "file"
    assert acc.missing == ("tests/test_c.py",)
    assert acc.duplicated == ("tests/test_b.py",)
    assert acc.unplanned == ("tests/test_d.py",)


def test_failures_and_flaky(tmp_path, plan):
    write_shard(tmp_path, plan, 1, [case_for(ITEMS[0][0], CaseOutcome.FAILED), flaky_case(ITEMS[0][1])])
    write_shard(tmp_path, plan, 2)
    write_shard(tmp_path, plan, 3)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.totals.failed == 1
    assert verdict.totals.flaky == 1
    kinds = sorted((r.test_id, r.kind.value) for r in verdict.failures)
    assert kinds == [(ITEMS[0][0], "failed"), (ITEMS[0][1], "flaky")]
    assert verdict.exit_code == 1


def test_flaky_only_passes_unless_flaky_result_fail(tmp_path, plan):
    write_all(tmp_path, plan)
    write_shard(tmp_path, plan, 3, [flaky_case(ITEMS[2][0])])
    assert aggregate_dirs(plan, [tmp_path]).exit_code == 0
    strict = aggregate_dirs(plan, [tmp_path], flaky_result=FlakyResult.FAIL)
    assert strict.exit_code == 1
    assert "flaky" in strict.reasons[0]


def test_runner_said_passed_but_junit_has_failures(tmp_path, plan):
    write_all(tmp_path, plan)
    write_shard(tmp_path, plan, 3, [case_for(ITEMS[2][0], CaseOutcome.ERROR)], status=ShardStatus.PASSED)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.shards[2].status is ShardStatus.FAILED
    assert "although the runner reported passed" in verdict.shards[2].reason


def test_empty_shard_without_a_folder_is_empty_but_a_planned_one_is_never_started(tmp_path):
    plan = make_plan([["tests/test_a.py::t"], [], ["tests/test_b.py::u"]])
    write_shard(tmp_path, plan, 1)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.shards[1].status is ShardStatus.EMPTY
    assert verdict.shards[2].status is ShardStatus.NEVER_STARTED
    assert verdict.exit_code == 1
    write_shard(tmp_path, plan, 3)
    assert aggregate_dirs(plan, [tmp_path]).exit_code == 0


def test_empty_shard_passes_as_empty(tmp_path):
    plan = make_plan([["tests/test_a.py::t"], []])
    write_shard(tmp_path, plan, 1)
    write_shard(tmp_path, plan, 2, [])
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.shards[1].status is ShardStatus.EMPTY
    assert verdict.exit_code == 0


def test_flat_merge_multiple_layout_and_given_shard_folders(tmp_path, plan):
    write_all(tmp_path / "merged", plan)
    dirs = [tmp_path / "merged" / f"shard-{i}-of-3" for i in (1, 2, 3)]
    assert aggregate_dirs(plan, dirs).exit_code == 0
    # the same folder reached twice is counted once
    assert aggregate_dirs(plan, [tmp_path / "merged", dirs[0]]).accounting.duplicated == ()


def test_stray_folder_is_noted(tmp_path, plan):
    write_all(tmp_path, plan)
    (tmp_path / "shard-7-of-9").mkdir()
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 0
    assert any("shard-7-of-9" in n for n in verdict.notes)


def test_unmappable_results_fail_as_unverified_and_their_items_are_missing(tmp_path):
    plan = make_plan([["src/a.test.ts"], ["src/b.test.ts"]], Granularity.FILE)
    write_shard(tmp_path, plan, 1, [CaseResult(test_id="Suite A::works", name="works", classname="Suite A")])
    write_shard(
        tmp_path, plan, 2, [CaseResult(test_id="src/b.test.ts::B::ok", name="ok", classname="B", file="src/b.test.ts")]
    )
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.accounting.unverified_shards == (1,)
    assert verdict.accounting.missing == ("src/a.test.ts",)
    assert verdict.accounting.unplanned == ("Suite A",)  # file plan: the "file" part of what ran
    first = verdict.shards[0]
    assert not first.verified
    assert first.status is ShardStatus.FAILED
    assert first.reason == (
        "its results name none of its 1 planned item, so they count as missing "
        "(every test it reported is outside its plan: only tests no planned item covers ran, or the ids are"
        " written another way than the plan's)"
    )
    assert verdict.shards[1].status is ShardStatus.PASSED
    assert verdict.exit_code == 1
    assert "results of shard #1 could not be matched to plan items" in verdict.reasons
    assert "unverified: its results name none of its 1 planned item" in render_terminal(verdict)
    assert "shard 1 name no planned item" in render_summary(verdict)
    assert "their planned files count as missing and the run fails" in render_summary(verdict)


def test_shard_that_ran_only_unplanned_tests_fails_and_names_its_items(tmp_path):
    # the reviewer's repro: shard 2 ran only other/test_q.py::test_q, its planned test was never named
    plan = make_plan([["tests/test_a.py::test_y"], ["tests/test_b.py::test_z"]])
    write_shard(tmp_path, plan, 1)
    write_shard(tmp_path, plan, 2, [case_for("other/test_q.py::test_q")])
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 1
    assert not verdict.passed
    assert verdict.accounting.missing == ("tests/test_b.py::test_z",)
    assert verdict.accounting.unplanned == ("other/test_q.py::test_q",)
    assert verdict.accounting.unverified_shards == (2,)
    assert verdict.shards[1].status is ShardStatus.FAILED
    assert verdict.reasons == (
        "1 of 2 shards did not pass (#2 failed)",
        "results of shard #2 could not be matched to plan items",
        "1 planned test never ran",
    )
    not_run = [r for r in verdict.failures if r.kind is FailureKind.NOT_RUN]
    assert [(r.shard, r.test_id, r.message) for r in not_run] == [
        (
            2,
            "tests/test_b.py::test_z",
            "planned but never reported: shard 2's results could not be matched to plan items",
        )
    ]
    text = render_terminal(verdict)
    assert "tests/test_b.py::test_z" in text
    assert "other/test_q.py::test_q" in text


def test_not_a_directory_is_input_error(tmp_path, plan):
    with pytest.raises(InputError, match="nope"):
        aggregate_dirs(plan, [tmp_path / "nope"])


def test_failures_jsonl_records_are_used(tmp_path, plan):
    write_all(tmp_path, plan)
    write_shard(tmp_path, plan, 1, [case_for(ITEMS[0][0], CaseOutcome.FAILED), case_for(ITEMS[0][1])])
    lines = (tmp_path / "shard-1-of-3" / "failures.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["test_id"] == ITEMS[0][0]
    verdict = aggregate_dirs(plan, [tmp_path])
    assert [r.test_id for r in verdict.failures] == [ITEMS[0][0]]
    (tmp_path / "shard-1-of-3" / "failures.jsonl").write_text("garbage\n")
    verdict = aggregate_dirs(plan, [tmp_path])
    assert [r.test_id for r in verdict.failures] == [ITEMS[0][0]]  # derived from junit instead
    assert any("failures.jsonl" in n for n in verdict.shards[0].notes)


def test_durations_for_timings(tmp_path, plan):
    write_all(tmp_path, plan)
    durations = aggregate_dirs(plan, [tmp_path]).durations()
    assert durations == {i: 1.5 for s in ITEMS for i in s}


def test_no_outcome_folder_named_like_a_shard(tmp_path, plan):
    write_all(tmp_path, plan)
    (tmp_path / "shard-2-of-3" / "outcome.json").unlink()
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.shards[1].status is ShardStatus.ERROR
    assert "no outcome.json" in verdict.shards[1].reason


def test_path_type(tmp_path, plan):
    write_all(tmp_path, plan)
    assert aggregate_dirs(plan, [Path(str(tmp_path))]).passed


def test_runner_shard_level_case_is_a_failure_not_an_unplanned_test(tmp_path, plan):
    write_all(tmp_path, plan)
    crash = CaseResult(
        test_id="ci-shards::shard-3-of-3",
        name="shard-3-of-3",
        classname="ci-shards",
        outcome=CaseOutcome.ERROR,
        message="no test report; the command exited with code 139",
    )
    write_shard(tmp_path, plan, 3, [crash])
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 1
    assert verdict.accounting.unplanned == ()
    assert verdict.accounting.missing == ("tests/test_c.py::test_only",)
    assert [r.test_id for r in verdict.failures if r.kind.value == "error"] == ["ci-shards::shard-3-of-3"]


@pytest.mark.parametrize(
    ("test_id", "owner"),
    [
        ("tests/a.py::test_x", "tests/a.py::test_x"),
        ("tests/a.py::test_x[1]", "tests/a.py::test_x"),
        ("tests/a.py::test_x[a::b]", "tests/a.py::test_x"),
        ("tests/a.py::TestK::test_m[x-y]", "tests/a.py::TestK"),
        ("tests/b.py::test_y", "tests/b.py"),
        ("tests/c.py::test_z", None),
        ("tests/a.py::test_xy", None),
    ],
)
def test_owner_is_the_longest_planned_prefix(test_id, owner):
    planned = {"tests/a.py::test_x", "tests/a.py::TestK", "tests/b.py"}
    assert owning_item(test_id, planned) == owner


def _jest_junit(file: str, *, add_file_attribute: bool) -> str:
    """A report as jest-junit writes it (default templates: suite = first describe,
    classname = "{classname} {title}")."""
    attr = f' file="{file}"' if add_file_attribute else ""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuites name="jest tests" tests="1" failures="0" errors="0" time="0.5">\n'
        '  <testsuite name="Sum" errors="0" failures="0" skipped="0" timestamp="2026-11-30T01:00:00" time="0.4"'
        ' tests="1">\n'
        f'    <testcase classname="Sum adds two numbers" name="Sum adds two numbers" time="0.003"{attr}>\n'
        "    </testcase>\n"
        "  </testsuite>\n"
        "</testsuites>\n"
    )


@pytest.mark.parametrize("add_file_attribute", [True, False])
def test_jest_junit_maps_to_planned_files_only_with_its_file_attribute(tmp_path, add_file_attribute):
    # examples/workflows/jest.yml sets JEST_JUNIT_ADD_FILE_ATTRIBUTE=true for exactly this reason
    files = ["src/a.test.ts", "src/b.test.ts"]
    plan = make_plan([[f] for f in files], Granularity.FILE)
    for index, file in enumerate(files, 1):
        folder = write_shard(tmp_path, plan, index, [], status=ShardStatus.PASSED)
        (folder / "junit.xml").write_text(_jest_junit(file, add_file_attribute=add_file_attribute), encoding="utf-8")
    verdict = aggregate_dirs(plan, [tmp_path])
    if add_file_attribute:
        assert verdict.exit_code == 0, verdict.reasons
        assert verdict.accounting.unverified_shards == ()
    else:
        assert verdict.exit_code == 1
        assert verdict.accounting.unverified_shards == (1, 2)
        assert verdict.accounting.missing == tuple(files)


def test_shard_with_no_planned_items_that_reports_tests_fails(tmp_path):
    plan = make_plan([["tests/test_a.py::test_y"], []])
    write_shard(tmp_path, plan, 1)
    write_shard(tmp_path, plan, 2, [case_for("other/test_q.py::test_q")], status=ShardStatus.PASSED)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 1
    assert verdict.shards[1].status is ShardStatus.FAILED
    assert verdict.shards[1].reason == "it was planned no items but reported tests that no planned item owns"
    assert verdict.accounting.unplanned == ("other/test_q.py::test_q",)
    assert verdict.accounting.missing == ()


def test_an_empty_plan_fails_unless_allow_empty(tmp_path):
    plan = make_plan([[], []])
    verdict = aggregate_dirs(plan, [tmp_path])
    assert [s.status for s in verdict.shards] == [ShardStatus.EMPTY] * 2
    assert (verdict.exit_code, verdict.reasons) == (1, ("no tests ran: the plan has no items",))
    assert verdict.headline.startswith("FAILED: no tests ran")
    assert aggregate_dirs(plan, [tmp_path], allow_empty=True).exit_code == 0


def test_an_empty_shard_in_a_non_empty_plan_still_passes(tmp_path):
    plan = make_plan([["tests/test_a.py::test_y"], []])
    write_shard(tmp_path, plan, 1)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.exit_code == 0, verdict.reasons
    assert verdict.shards[1].status is ShardStatus.EMPTY


def test_a_run_where_every_test_was_skipped_fails_unless_allow_empty(tmp_path):
    plan = make_plan([["tests/test_a.py::test_y"]])
    write_shard(tmp_path, plan, 1, [case_for("tests/test_a.py::test_y", CaseOutcome.SKIPPED)])
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.shards[0].status is ShardStatus.PASSED
    assert verdict.exit_code == 1
    assert verdict.reasons[0].startswith("no tests ran: 1 item was planned")
    assert aggregate_dirs(plan, [tmp_path], allow_empty=True).exit_code == 0


def test_headline_tells_errors_from_failures_in_agreeing_numbers(tmp_path, plan):
    # issue 9.6: "6166 tests failed" when the totals said 0 failed, 6166 errors
    write_shard(tmp_path, plan, 1, [case_for(i, CaseOutcome.ERROR) for i in ITEMS[0]])
    write_shard(tmp_path, plan, 2, [case_for(ITEMS[1][0], CaseOutcome.FAILED), case_for(ITEMS[1][1])])
    write_shard(tmp_path, plan, 3)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.reasons[0] == "1 failed, 2 errors"
    assert verdict.headline.startswith("FAILED: 1 failed, 2 errors; 2 of 3 shards did not pass")
    assert verdict.headline.endswith("(5 tests, 2 passed, 1 failed, 2 errors, 0 skipped)")

    only_errors = tmp_path / "errors"
    write_all(only_errors, plan)
    write_shard(only_errors, plan, 3, [case_for(ITEMS[2][0], CaseOutcome.ERROR)])
    verdict = aggregate_dirs(plan, [only_errors])
    assert verdict.reasons[0] == "1 error"
    assert "failed" not in verdict.reasons[0]
    assert verdict.headline.endswith("(5 tests, 4 passed, 0 failed, 1 error, 0 skipped)")


def test_a_shard_reason_the_terminal_table_cuts_is_listed_whole_below_it(tmp_path, plan):
    write_all(tmp_path, plan)
    verdict = aggregate_dirs(plan, [tmp_path])
    long = "the command exited with code 1 but its report shows no failure: " + "why " * 40 + "the end"
    failed = dataclasses.replace(verdict.shards[0], status=ShardStatus.FAILED, reason=long)
    text = render_terminal(dataclasses.replace(verdict, shards=(failed, *verdict.shards[1:])))
    assert "the end" not in text.split("why the shards failed, in full (1):")[0]  # cut in the table
    assert f"  1/3: {long}\n" in text
    short = dataclasses.replace(verdict.shards[0], status=ShardStatus.FAILED, reason="zero tests executed")
    assert "in full" not in render_terminal(dataclasses.replace(verdict, shards=(short, *verdict.shards[1:])))
