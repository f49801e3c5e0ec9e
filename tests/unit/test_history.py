"""The test history (history/outcomes.py), the triage (report/triage.py) and the quarantine entries: pure parts."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_shards.cli import main
from ci_shards.common.errors import ConfigError
from ci_shards.history.outcomes import History, Mark, RunInfo, from_json
from ci_shards.options.config import parse_config
from ci_shards.report.quarantine import QuarantineEntry
from ci_shards.report.triage import Ancestry, FailOn, Kind, TriageContext, classify
from tests.unit.aggregate_fixtures import make_plan, write_all

T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)


def run(n: int, *, branch: str = "main", commit: str = "", days: float = 0) -> RunInfo:
    return RunInfo(run=str(n), commit=commit or f"c{n}", branch=branch, date=T0 + timedelta(days=days or n))


def test_record_aligns_rows_and_keeps_each_tests_outcomes_in_order() -> None:
    h = History().record(run(1), {"a": Mark.PASSED, "b": Mark.FAILED})
    h = h.record(run(2), {"b": Mark.PASSED, "c": Mark.FLAKY})
    assert h.tests == {"a": "p.", "b": "fp", "c": ".k"}
    assert [(r.run, m) for r, m in h.outcomes("b")] == [("1", Mark.FAILED), ("2", Mark.PASSED)]


def test_record_caps_runs_per_test_and_cells_in_total_and_prunes_by_age() -> None:
    h = History()
    for n in range(1, 8):
        h = h.record(run(n), {"a": Mark.PASSED}, max_runs=3)
    assert [r.run for r in h.runs] == ["5", "6", "7"] and h.tests == {"a": "ppp"}
    wide = History().record(run(1), {f"t{i}": Mark.PASSED for i in range(10)}, max_cells=15)
    wide = wide.record(run(2), {f"t{i}": Mark.FAILED for i in range(10)}, max_cells=15)
    assert [r.run for r in wide.runs] == ["2"]  # 10 tests x 2 runs > 15 cells: the oldest run goes
    old = History().record(run(1, days=1), {"gone": Mark.PASSED}).record(run(2, days=200), {"a": Mark.PASSED})
    assert [r.run for r in old.runs] == ["2"] and old.tests == {"a": "p"}  # a test with nothing left is dropped


@given(
    st.lists(
        st.dictionaries(st.sampled_from("abcdefgh"), st.sampled_from(list(Mark)), max_size=8), min_size=1, max_size=12
    ),
    st.integers(1, 5),
    st.integers(1, 40),
)
def test_the_caps_always_hold_and_the_latest_run_is_always_kept(runs: list, max_runs: int, max_cells: int) -> None:
    h = History()
    for n, marks in enumerate(runs, 1):
        h = h.record(run(n), marks, max_runs=max_runs, max_cells=max_cells)
    assert 1 <= len(h.runs) <= max_runs and h.runs[-1].run == str(len(runs))
    assert len(h.runs) == 1 or len(h.tests) * len(h.runs) <= max_cells
    assert all(len(row) == len(h.runs) and row.strip(".") for row in h.tests.values())
    assert {t: m for t, m in runs[-1].items()} == {t: row[-1] for t, row in h.tests.items() if row[-1] != "."}
    again, warnings = from_json(h.to_json(), "store")
    assert (again, warnings) == (h, [])


def test_a_malformed_section_is_a_warning_and_an_empty_history() -> None:
    assert from_json(None, "s") == (History(), [])
    assert from_json([1], "s")[1] == ["s: the 'outcomes' section is malformed; starting an empty test history"]
    runs = [{"run": "1", "date": "yesterday"}, {"run": "2", "date": "2026-11-02T00:00:00Z"}]
    data = {"runs": runs, "tests": {"a": "fp"}}
    history, warnings = from_json(data, "s")
    assert history.tests == {"a": "p"} and warnings == ["s: skipped 1 run(s) of the test history without a valid date"]


def _ctx(**kw: object) -> TriageContext:
    values: dict = {"commit": "head", "base_branch": "main", "now": T0 + timedelta(days=10)}
    values.update(kw)
    return TriageContext(**values)


def test_known_needs_the_latest_base_result_failing_and_names_since_when() -> None:
    h = History().record(run(1), {"a": Mark.PASSED}).record(run(2), {"a": Mark.FAILED})
    h = h.record(run(3), {"a": Mark.ERROR})
    t = classify(["a"], {"a": Mark.FAILED}, h, _ctx(ancestry={"c3": Ancestry.ANCESTOR}))
    (c,) = t.failures
    assert (c.kind, c.why) == (Kind.KNOWN, "failing on main since c2 (2026-11-03, run 2)")
    unknown = classify(["a"], {"a": Mark.FAILED}, h, _ctx()).failures[0]
    assert unknown.kind is Kind.KNOWN and "ancestry not checked" in unknown.why
    other = classify(["a"], {"a": Mark.FAILED}, h, _ctx(base_branch="release")).failures[0]
    assert (other.kind, other.why) == (Kind.NEW, "no result on release to compare")


def test_fail_on_decides_which_failures_are_excused() -> None:
    h = History().record(run(1), {"k": Mark.FAILED, "n": Mark.PASSED, "q": Mark.FAILED})
    entries = (QuarantineEntry(test="q*", reason="r"),)
    marks = {"k": Mark.FAILED, "n": Mark.FAILED, "q": Mark.FAILED}
    any_ = classify(["q", "k", "n"], marks, h, _ctx(quarantine=entries))
    assert [(c.test_id, c.kind) for c in any_.failures] == [("n", Kind.NEW), ("k", Kind.KNOWN), ("q", Kind.QUARANTINED)]
    assert any_.excused == {"q"}
    assert classify(["q", "k", "n"], marks, h, _ctx(quarantine=entries, fail_on=FailOn.NEW)).excused == {"q", "k"}


def test_quarantine_entries_in_the_config() -> None:
    config = parse_config(
        {"fail-on": "new", "quarantine": [{"test": "tests/a.py::*", "reason": "flaky", "expires": date(2026, 12, 1)}]},
        "ci-shards.yml",
    )
    (entry,) = config.quarantine
    assert config.fail_on == "new" and entry.matches("tests/a.py::test_x") and not entry.expired(date(2026, 12, 1))
    assert entry.expired(date(2026, 12, 2))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("tests/a.py", "'quarantine' must be a list of {test, reason, expires} entries, not \"tests/a.py\""),
        (["tests/a.py"], "quarantine entry 1 must be a mapping with 'test' and 'reason', not \"tests/a.py\""),
        ([{"test": "a"}], "quarantine entry 1: 'reason' must be a non-empty string, not null"),
        ([{"test": "a", "reason": "r", "expires": "31.12.2026"}], "'expires' must be a date YYYY-MM-DD"),
        ([{"test": "a", "reason": "r", "until": "2026-12-31"}], "unknown key 'until' (allowed: test, reason, expires)"),
    ],
)
def test_a_bad_quarantine_entry_is_one_line_naming_it(value: object, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({"quarantine": value}, "ci-shards.yml")
    assert message in str(err.value) and str(err.value).startswith("ci-shards.yml: ")
    assert "\n" not in str(err.value)


def test_aggregate_with_a_bad_quarantine_is_exit_2_naming_the_entry(tmp_path, monkeypatch, capsys) -> None:
    plan = make_plan([["tests/test_a.py::test_a"]])
    (tmp_path / "plan.json").write_text(plan.dumps())
    write_all(tmp_path / "shards", plan)
    (tmp_path / "ci-shards.yml").write_text("quarantine:\n  - test: tests/test_a.py::test_a\n    reason: ''\n")
    monkeypatch.chdir(tmp_path)
    assert main(["aggregate", "--plan", "plan.json", "shards"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("ci-shards.yml: quarantine entry 1: 'reason' must be a non-empty string, not \"\"")
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert main(["aggregate", "--plan", "plan.json", "shards", "--max-base-age", "two"]) == 2
    assert "--max-base-age: must be a whole number of days, not 'two'" in capsys.readouterr().err


def test_a_history_without_branch_names_says_the_base_branch_not_an_empty_name() -> None:
    # issue 27: `failing on  since an unknown commit` (runs recorded with no branch, no base branch given)
    h = History().record(run(1, branch="", commit=""), {"a": Mark.FAILED})
    (c,) = classify(["a"], {"a": Mark.FAILED}, h, _ctx(base_branch="")).failures
    assert c.kind is Kind.KNOWN
    assert c.why.startswith("failing on the base branch since ")
    assert "  " not in c.why


def test_known_failures_of_one_reason_are_one_row() -> None:
    # issue 27: `--fail-on new` listed 31 known failures one per line; the summary groups them by reason
    from ci_shards.report.triage_view import triage_context  # noqa: PLC0415

    failing = [f"t.py::test_same[{n}]" for n in range(30)] + ["t.py::test_other"]
    h = (
        History()
        .record(run(1), {t: Mark.FAILED for t in failing[:30]})
        .record(run(2), {"t.py::test_other": Mark.FAILED})
    )
    triage = classify(failing, dict.fromkeys(failing, Mark.FAILED), h, _ctx(fail_on=FailOn.NEW))
    view = triage_context(triage, list_limit=100, summary=True)
    assert view is not None and view["known_total"] == 31 and view["known_more"] == 0
    assert [row["count"] for row in view["known"]] == [30, 1]
    assert view["known"][0]["id"] == "**× 30 tests** (first `t.py::test_same[0]`)"
