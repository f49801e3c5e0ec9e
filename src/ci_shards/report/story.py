"""The parts of the job summary that tell the rest of the run's story (issue 27): skipped tests grouped by
reason, xfailed and xpassed tests as pytest reports them, each flaky test's first failed attempt, the
slowest tests by measured time only, whether the plan's estimates were guesses, and why the planned items
that never ran did not. Pure: a verdict's
cases in, template values out, every test-given text made inert by ``md``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ci_shards.common.console import fmt_seconds, plural
from ci_shards.model.failures import FailureKind
from ci_shards.model.outcome import COLLECTOR_SKIPPED_TYPE, CaseResult
from ci_shards.report import md
from ci_shards.report.frames import restore_first_indent
from ci_shards.report.verdict import UNMEASURED, Verdict

NO_REASON: Final = "no reason given"
# fmt_seconds shows tenths: a faster test would read "0.0s", which says nothing about where time went
MEASURABLE_SECONDS: Final = 0.05


def skip_reasons(cases: Sequence[CaseResult], limit: int) -> list[dict[str, Any]]:
    """``12 skipped: requires numpy``: the skipped tests grouped by their reason (pytest's skip message),
    the largest group first, ties by reason; at most ``limit`` groups, each with a few of its ids."""
    groups: dict[str, list[str]] = {}
    for case in cases:
        if case.counted_as == "skipped":
            groups.setdefault(case.message.strip() or NO_REASON, []).append(case.test_id)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:limit]
    return [
        {
            "count": len(ids),
            "reason": md.inline(reason, 300),
            "ids": [md.code_inline(i, 300) for i in ids[:5]],
            "more": max(0, len(ids) - 5),
        }
        for reason, ids in ordered
    ]


def expected_failures(cases: Sequence[CaseResult], limit: int) -> dict[str, list[dict[str, str]]]:
    """The xfailed tests (with their reason) and the xpassed ones, as pytest's ``-rxX`` lists them."""
    rows: dict[str, list[dict[str, str]]] = {"xfailed": [], "xpassed": []}
    for case in cases:
        kind = case.counted_as
        if kind in rows and len(rows[kind]) < limit:
            rows[kind].append({"id": md.code_inline(case.test_id, 300), "reason": md.inline(case.message, 300)})
    return rows


def flaky_rows(flaky: Sequence[tuple[int, CaseResult]], limit: int, trace_chars: int) -> list[dict[str, Any]]:
    """Each flaky test with its first failed attempt's error (collapsed in the summary): "passed after 2
    attempts" alone hides what went wrong the first time."""
    rows = []
    for shard, case in flaky[:limit]:
        first = next((a for a in case.attempts if a.outcome.is_bad), None)
        message = first.message if first is not None else ""
        shown = trace_chars and first is not None and first.text.strip()  # 0: the first line only (the comment)
        trace = restore_first_indent(first.text) if shown and first is not None else ""
        rows.append(
            {
                "shard": shard,
                "id": md.code_inline(case.test_id),
                "summary_id": md.summary_text(case.test_id, 300),
                "attempts": 1 + len(case.attempts),
                "first_error": md.summary_text(message.splitlines()[0] if message.strip() else "", 300),
                "trace": md.code_block(trace, trace_chars) if trace else "",
            }
        )
    return rows


def slowest(cases: Sequence[CaseResult], count: int) -> list[dict[str, str]]:
    """The slowest tests by measured time, "measured" read as the timings store reads it
    (``verdict.UNMEASURED``): an xfailed test ran and its time counts, as in pytest's own ``--durations``;
    a skipped or left-out one did not. No implausible time, nothing that would read 0.0s."""
    measured = [
        c for c in cases if c.counted_as not in UNMEASURED and not c.time_invalid and c.time >= MEASURABLE_SECONDS
    ]
    ranked = sorted(measured, key=lambda c: (-c.time, c.test_id))[:count]
    return [{"id": md.code_inline(c.test_id, table=True), "time": fmt_seconds(c.time)} for c in ranked]


def estimates_note(verdict: Verdict) -> str:
    """What the plan's estimates were worth: '' when every item had a timing."""
    unknown, planned = verdict.unknown_items, verdict.accounting.planned
    if not unknown:
        return ""
    if unknown >= planned:
        return "every estimate was a guess: there were no timings for any planned item"
    return f"{plural(unknown, 'planned item')} of {planned} had no timing: their estimates were guesses"


def missing_causes(verdict: Verdict) -> tuple[str, dict[str, str]]:
    """Why the planned items that never ran did not, as their shards said (pytest's -x or pytest.exit(), a
    deadline, a crash): (the one cause every item shares, "" when they differ or none is known; each item's
    own cause when they differ). A shard's reason names only its first item, and bare ids read as lost tests;
    a shared cause is said once and whole, since it may hold the fix (-x's --maxfail=0)."""
    why = {r.test_id: r.message for r in verdict.failures if r.kind is FailureKind.NOT_RUN and r.message}
    causes = {why.get(i, "") for i in verdict.accounting.missing}
    if len(causes) == 1:
        return causes.pop(), {}
    return "", {i: why[i] for i in verdict.accounting.missing if i in why}


def unplanned_where(verdict: Verdict) -> dict[str, str]:
    """Each test that ran unplanned → where it ran, as the lists say it: "shard 2", and ", skipped at collection"
    for a module that skipped as pytest collected it (``pytest.importorskip``): a ``--pytest`` plan's collection
    gave it no test to plan, and the shard that walks unowned files reports its skip, as plain pytest counts it
    (tqdm 4.70.1's tests_pandas.py, conformance run 11), which is no new test."""
    acc = verdict.accounting
    if not acc.unplanned:  # the common case: no walk of every case (each render asks)
        return {}
    skipped = {case.test_id for shard in verdict.shards for case in shard.cases if case.type == COLLECTOR_SKIPPED_TYPE}
    return {
        i: f"shard {acc.unplanned_shard.get(i, '?')}" + (", skipped at collection" if i in skipped else "")
        for i in acc.unplanned
    }
