"""The whole story of a run at first glance (issue 27), as one golden summary and annotation set: a
30-case failure group and one distinct failure (annotations on distinct failures first, the repro naming
the parametrized test once), a flaky test's first error, skips grouped by two reasons, xfail and xpass,
slowest tests only from measured times."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ci_shards.model.outcome import LEFT_OUT_TYPE, XFAILED_TYPE, CaseOutcome
from ci_shards.report import github, story
from ci_shards.report.aggregate import aggregate_dirs
from ci_shards.report.render import render_summary
from tests.unit.aggregate_fixtures import case_for, flaky_case, make_plan, write_shard
from tests.unit.golden import check_golden

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "report"
SAME = [f"tests/test_same.py::test_same[{n}]" for n in range(30)]
DISTINCT = "tests/test_other.py::test_distinct"
FLAKY = "tests/test_other.py::test_flaky"
SKIPS = {
    **{f"tests/test_np.py::test_np_{n}": "requires numpy" for n in range(3)},
    **{f"tests/test_net.py::test_net_{n}": "needs network" for n in range(2)},
}
XFAIL, XPASS, QUICK = (
    "tests/test_x.py::test_known_bug",
    "tests/test_x.py::test_fixed_bug",
    "tests/test_x.py::test_quick",
)


def _same(test_id: str, n: int) -> object:
    trace = (
        f"n = {n}\n\n    @pytest.mark.parametrize('n', range(30))\n    def test_same(n):\n"
        ">       assert compute(n) == 0\nE       assert 1 == 0\n\ntests/test_same.py:7: AssertionError"
    )
    return case_for(test_id, CaseOutcome.FAILED, message="assert 1 == 0", text=trace, line=5)


def _story(tmp_path: Path):
    shard_1, shard_2 = [*SAME[:15], *SKIPS, QUICK], [*SAME[15:], DISTINCT, FLAKY, XFAIL, XPASS]
    plan = make_plan([shard_1, shard_2])
    distinct_trace = (
        "    def test_distinct():\n>       assert parse('x') == 1\nE       ValueError: no number in 'x'\n\n"
        "tests/test_other.py:12: ValueError"
    )
    skipped = [case_for(i, CaseOutcome.SKIPPED, message=reason, time=0.0) for i, reason in SKIPS.items()]
    write_shard(
        tmp_path,
        plan,
        1,
        [*(_same(i, n) for n, i in enumerate(SAME[:15])), *skipped, case_for(QUICK, time=0.001)],
    )
    write_shard(
        tmp_path,
        plan,
        2,
        [
            *(_same(i, n) for n, i in enumerate(SAME[15:], 15)),
            case_for(
                DISTINCT, CaseOutcome.FAILED, message="ValueError: no number in 'x'", text=distinct_trace, line=10
            ),
            flaky_case(FLAKY),
            case_for(XFAIL, CaseOutcome.SKIPPED, type="pytest.xfail", message="bug #12, fixed upstream soon", time=0.2),
            case_for(XPASS, type="pytest.xpass", message="bug #7", time=0.3),
        ],
    )
    return aggregate_dirs(plan, [tmp_path])


def test_golden_story_summary_and_annotations(tmp_path: Path) -> None:
    verdict = _story(tmp_path)
    summary = render_summary(verdict)
    annotations = github.annotation_lines(verdict)
    check_golden(GOLDEN / "story.summary.md", summary)
    check_golden(GOLDEN / "story.annotations.txt", "\n".join(annotations) + "\n")
    errors = [a for a in annotations if a.startswith("::error ")]
    # the distinct failure is annotated, the group once with its count first, no shard-level line
    assert "test_same[0] (shard 1) × 30 tests" in errors[0]
    assert any("test_distinct (shard 2)" in e for e in errors[:2])
    assert not any("title=ci-shards" in e for e in errors)
    assert len(errors) == 10
    assert "3 skipped: requires numpy" in summary and "2 skipped: needs network" in summary
    assert "xfailed `tests/test_x.py::test_known_bug`: bug \\#12" in summary
    assert "xpassed `tests/test_x.py::test_fixed_bug`" in summary
    assert "first attempt: timing out on first try" in summary
    assert "'tests/test_same.py::test_same' \\\n" in summary and "test_same[3]" not in summary.split("Reproduce")[1]
    slowest = summary.split("Slowest tests")[1]
    assert "0.0s" not in slowest and "test_np_" not in slowest and "test_known_bug" not in slowest


def test_plan_quality_says_when_the_estimates_were_guesses(tmp_path: Path) -> None:
    verdict = _story(tmp_path)
    assert "were guesses" not in render_summary(verdict)  # every item had a timing
    some = render_summary(dataclasses.replace(verdict, unknown_items=12))
    assert "the plan estimated 43.0s (12 planned items of 40 had no timing: their estimates were guesses)." in some
    every = render_summary(dataclasses.replace(verdict, unknown_items=40))
    assert "(every estimate was a guess: there were no timings for any planned item)." in every


def test_slowest_reads_measured_as_the_timings_store_does() -> None:
    """One reading of "measured" (story.slowest and verdict.UNMEASURED): an xfailed test ran, so its time
    is listed as pytest's --durations lists it; a skipped or left-out one, or an implausible time, never."""
    cases = [
        case_for("tests/test_x.py::test_slow_xfail", CaseOutcome.SKIPPED, type=XFAILED_TYPE, time=9.0),
        case_for("tests/test_x.py::test_skipped", CaseOutcome.SKIPPED, message="later", time=8.0),
        case_for("tests/test_x.py::test_left_out", CaseOutcome.SKIPPED, type=LEFT_OUT_TYPE, time=7.0),
        case_for("tests/test_x.py::test_invalid", time=0.0, time_invalid=True),
        case_for("tests/test_x.py::test_ran", time=2.0),
    ]
    listed = [row["id"] for row in story.slowest(cases, 10)]
    assert listed == ["`tests/test_x.py::test_slow_xfail`", "`tests/test_x.py::test_ran`"]
