"""The triage in the reports: golden summary and comment with new, known, flaky and quarantined sections,
new failures first; size limits with 50,000 classified failures; injected text stays inert.

Regenerate the golden files after an intended change (then review the diff):
    CI_SHARDS_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/unit/report/test_render_history.py
"""

from __future__ import annotations

import dataclasses
import re
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from ci_shards.history.outcomes import History, Mark, RunInfo, marks_of
from ci_shards.model.outcome import CaseOutcome, Outcome, ShardStatus
from ci_shards.report.aggregate import decide
from ci_shards.report.artifacts import ShardArtifact
from ci_shards.report.quarantine import QuarantineEntry
from ci_shards.report.render import COMMENT_BUDGET_CHARS, SUMMARY_BUDGET_BYTES, render_comment, render_summary
from ci_shards.report.triage import Ancestry, FailOn, TriageContext, classify
from ci_shards.report.triage_view import render_triage_terminal
from ci_shards.report.verdict import Verdict
from tests.unit.aggregate_fixtures import case_for, flaky_case, make_plan
from tests.unit.golden import check_golden

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "report"
NOW = datetime(2026, 11, 30, 12, tzinfo=timezone.utc)
NEW, KNOWN, FLAKY, QUAR, STEADY, RETRIED = (
    "tests/test_new.py::test_regressed",
    "tests/test_known.py::test_broken_on_main",
    "tests/test_flaky.py::test_races",
    "tests/test_net.py::test_port",
    "tests/test_ok.py::test_fine",
    "tests/test_ok.py::test_retried",
)


def _verdict(cases: list, excused: frozenset[str] = frozenset()) -> Verdict:
    plan = make_plan([[c.test_id for c in cases]])
    outcome = Outcome(plan_digest=plan.digest, shard_index=1, shard_total=1, status=ShardStatus.FAILED)
    artifact = ShardArtifact(path=Path("shard-1-of-1"), index=1, total=1, outcome=outcome, cases=tuple(cases))
    return decide(plan, [artifact], excused=excused)


def _history(base_marks: list[dict[str, Mark]]) -> History:
    history = History()
    for n, marks in enumerate(base_marks, 1):
        when = NOW - timedelta(days=len(base_marks) - n + 1)
        history = history.record(RunInfo(run=f"{n}.1", commit=f"{n}" + "a" * 39, branch="main", date=when), marks)
    return history


def _triaged(fail_on: FailOn = FailOn.NEW):
    cases = [
        case_for(NEW, CaseOutcome.FAILED),
        case_for(KNOWN, CaseOutcome.FAILED),
        case_for(FLAKY, CaseOutcome.FAILED),
        case_for(QUAR, CaseOutcome.ERROR),
        case_for(STEADY),
        flaky_case(RETRIED),
    ]
    history = _history(
        [
            {NEW: Mark.PASSED, KNOWN: Mark.PASSED, FLAKY: Mark.PASSED, STEADY: Mark.PASSED},
            {NEW: Mark.PASSED, KNOWN: Mark.FAILED, FLAKY: Mark.FLAKY, STEADY: Mark.PASSED},
            {NEW: Mark.PASSED, KNOWN: Mark.FAILED, FLAKY: Mark.PASSED, STEADY: Mark.PASSED},
        ]
    )
    ctx = TriageContext(
        commit="f" * 40,
        base_branch="main",
        now=NOW,
        fail_on=fail_on,
        ancestry={f"{n}" + "a" * 39: Ancestry.ANCESTOR for n in (1, 2, 3)},
        quarantine=(
            QuarantineEntry(test="tests/test_net.py::*", reason="races the port allocator (#12)"),
            QuarantineEntry(test="tests/test_old.py::*", reason="was slow", expires=date(2026, 1, 31)),
        ),
        quarantine_source="ci-shards.yml",
    )
    first = _verdict(cases)
    failing = [r.test_id for r in first.failures if r.kind.value in ("failed", "error")]
    triage = classify(failing, marks_of(first.cases), history, ctx)
    verdict = _verdict(cases, triage.excused)
    return dataclasses.replace(verdict, reasons=(*verdict.reasons, *triage.expired)), triage  # as aggregate does


def test_golden_triage_sections_lead_with_new_failures() -> None:
    verdict, triage = _triaged()
    summary = render_summary(verdict, triage=triage)
    comment = render_comment(verdict, key="CI/test", triage=triage)
    check_golden(GOLDEN / "triage.summary.md", summary)
    check_golden(GOLDEN / "triage.comment.md", comment)
    check_golden(GOLDEN / "triage.terminal.txt", render_triage_terminal(triage))
    order = ["Expired quarantine", "New failures", "Known failures", "Flaky failures", "Quarantined tests"]
    positions = [summary.index(title) for title in order]
    assert positions == sorted(positions) and positions[-1] < summary.index("### ❌ ")  # the failures, after the triage
    assert "Flaky rates" in summary and "Flaky rates" not in comment  # the table is the summary's


def test_fail_on_any_keeps_known_and_flaky_failing_but_never_quarantined() -> None:
    verdict, triage = _triaged(FailOn.ANY)
    assert triage.excused == {QUAR}
    assert verdict.reasons[0].startswith("3 ")
    verdict, triage = _triaged(FailOn.NEW)
    assert triage.excused == {QUAR, KNOWN, FLAKY} and verdict.reasons[0].startswith("1 ")


def test_no_history_and_fail_on_any_adds_nothing_to_the_report() -> None:
    cases = [case_for(NEW, CaseOutcome.FAILED), case_for(STEADY)]
    verdict = _verdict(cases)
    ctx = TriageContext(commit="", base_branch="main", now=NOW)
    triage = classify([NEW], marks_of(verdict.cases), History(), ctx)
    assert render_summary(verdict, triage=triage) == render_summary(verdict)
    assert render_triage_terminal(triage) == ""


@pytest.mark.parametrize("evil", ["@octocat `x` <img src=x> [a](http://e.test) ::error::x", "|a|b|\n# H"])
def test_injected_ids_and_reasons_stay_inert(evil: str) -> None:
    test_id = f"tests/test_x.py::test_{evil}"
    verdict = _verdict([case_for(test_id, CaseOutcome.FAILED)])
    ctx = TriageContext(
        commit="", base_branch=f"main{evil}", now=NOW, quarantine=(QuarantineEntry(test="nothing", reason=evil),)
    )
    triage = classify([test_id], marks_of(verdict.cases), History(), ctx)
    summary = render_summary(verdict, triage=triage)
    # code is inert wherever it stands: fenced blocks first (as long as their opening fence), then spans
    outside_blocks = re.sub(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1`*[ \t]*$", "", summary, flags=re.S | re.M)
    outside_code = re.sub(r"(`+) ?.*? ?\1", "", outside_blocks)
    assert "<img" not in outside_code and "\n# H" not in outside_code and "@octocat" not in outside_code


@pytest.mark.slow
@pytest.mark.parametrize("groups", [3, 50_000])
def test_50000_classified_failures_fit_under_limits(groups: int) -> None:
    ids = [f"tests/test_{i // 1000}.py::test_{'x' * 80}_{i}" for i in range(50_000)]
    trace = "frame\n" * 40
    cases = [case_for(t, CaseOutcome.FAILED, message=f"boom {i % groups}", text=trace) for i, t in enumerate(ids)]
    history = _history([{t: Mark.FAILED if i % 2 else Mark.PASSED for i, t in enumerate(ids)}])
    ctx = TriageContext(
        commit="", base_branch="main", now=NOW, quarantine=(QuarantineEntry(test="tests/test_4?.py::*", reason="q"),)
    )
    first = _verdict(cases)
    triage = classify(ids, marks_of(first.cases), history, ctx)
    verdict = _verdict(cases, triage.excused)
    summary = render_summary(verdict, triage=triage)
    comment = render_comment(verdict, key="CI/test", triage=triage)
    assert len(summary.encode()) <= 1_048_576 and len(summary.encode()) <= SUMMARY_BUDGET_BYTES
    assert len(comment) <= 65_536 and len(comment) <= COMMENT_BUDGET_CHARS
    for text in (summary, comment):
        assert "### 🆕 New failures (" in text and "### 📌 Known failures (" in text and "… and " in text
