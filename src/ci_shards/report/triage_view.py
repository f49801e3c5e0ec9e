"""Rendering the triage of a run (new, known, flaky and quarantined failures, flaky rates) for the
job summary, the PR comment (``templates/history.md.j2``), the terminal and the verdict JSON.

Pure, like ``report.py``: every test id, reason and branch name goes through ``md.py`` first.
"""

from __future__ import annotations

from typing import Any, Final

from ci_shards.common.console import strip_control
from ci_shards.report import md
from ci_shards.report.triage import Classified, Kind, Triage

COMMENT_LIST_LIMIT: Final = 10  # entries per section in the PR comment (65,536 characters for everything)
_MARK_WORDS: Final = {"p": "passed", "f": "failed", "e": "error", "k": "flaky", "s": "skipped"}


def informative(triage: Triage | None) -> bool:
    """Whether the triage says more than the failure list already does: there is a base to compare
    with, a quarantine, flaky history, or ``--fail-on new`` (whose 'every failure is new' is news)."""
    if triage is None:
        return False
    return bool(
        triage.base_runs
        or triage.quarantined
        or triage.flaky_rates
        or triage.expired
        or triage.fail_on.value == "new"
        or any(c.kind is not Kind.NEW for c in triage.failures)
    )


def _rows(entries: list[Classified], limit: int) -> list[dict[str, Any]]:
    """One row per reason, as the failures section groups identical failures: 30 cases of one test
    failing on the base branch since the same commit are one row ("x 30 tests"), not 30."""
    by_why: dict[str, list[str]] = {}
    for c in entries:
        by_why.setdefault(c.why, []).append(c.test_id)
    return [
        {
            "id": md.code_inline(ids[0])
            if len(ids) == 1
            else f"**× {len(ids)} tests** (first {md.code_inline(ids[0])})",
            "why": md.inline(why, 200),
            "count": len(ids),
        }
        for why, ids in list(by_why.items())[:limit]
    ]


def triage_context(triage: Triage | None, *, list_limit: int, summary: bool) -> dict[str, Any] | None:
    """What ``history.md.j2`` shows, each list capped at ``list_limit`` entries; None: nothing to show."""
    if triage is None or not informative(triage):
        return None
    limit = list_limit if summary else min(list_limit, COMMENT_LIST_LIMIT)
    sections: dict[str, Any] = {}
    for kind in Kind:
        entries = triage.of_kind(kind)
        rows = _rows(entries, limit)
        sections[kind.value] = rows
        sections[f"{kind.value}_total"] = len(entries)
        sections[f"{kind.value}_more"] = len(entries) - sum(r["count"] for r in rows)
    quarantined = triage.quarantined
    return {
        **sections,
        "base": md.inline(triage.base_branch or "the base branch", 100),
        "base_runs": triage.base_runs,
        "excusing": triage.fail_on.value == "new",
        "expired": [md.inline(m, 400) for m in triage.expired],
        "quarantined_tests": [
            {
                "id": md.code_inline(q.test_id),
                "outcome": _MARK_WORDS[q.mark.value],
                "reason": md.inline(q.entry.reason, 200),
                "expires": q.entry.expires.isoformat() if q.entry.expires else "",
            }
            for q in quarantined[:limit]
        ],
        "quarantined_tests_total": len(quarantined),
        "quarantined_failed": sum(1 for q in quarantined if q.mark.is_bad),
        "rates": [
            {
                "id": md.code_inline(r.test_id),
                "runs": f"{r.flaky_runs} of {r.runs}",
                "rate": f"{r.rate:.0%}",
                "quarantined": r.quarantined,
            }
            for r in triage.flaky_rates
        ]
        if summary
        else [],
        "limit": limit,
    }


def render_triage_terminal(triage: Triage | None) -> str:
    """A few lines for stderr: each failure's class, new ones first (capped like the terminal verdict)."""
    if triage is None or not informative(triage):
        return ""
    lines = [f"test history: compared with {triage.base_branch or 'the base branch'} ({triage.base_runs} runs)"]
    lines += [f"  {c.kind.value:<11} {c.test_id} — {c.why}" for c in triage.failures[:20]]
    if len(triage.failures) > 20:
        lines.append(f"  … and {len(triage.failures) - 20} more (see the job summary)")
    lines += [f"  {message}" for message in triage.expired]
    return strip_control("\n".join(lines)) + "\n"


def triage_json(triage: Triage | None) -> dict[str, Any] | None:
    """The triage in the verdict JSON (``aggregate --format json``)."""
    if triage is None:
        return None
    return {
        "fail_on": triage.fail_on.value,
        "base_branch": triage.base_branch,
        "base_runs": triage.base_runs,
        "failures": [{"test_id": c.test_id, "class": c.kind.value, "why": c.why} for c in triage.failures],
        "excused": sorted(triage.excused),
        "quarantined": [
            {"test_id": q.test_id, "outcome": _MARK_WORDS[q.mark.value], "entry": q.entry.test}
            for q in triage.quarantined
        ],
        "expired_quarantine": list(triage.expired),
        "flaky_rates": [{"test_id": r.test_id, "flaky_runs": r.flaky_runs, "runs": r.runs} for r in triage.flaky_rates],
    }
