"""Rendering a verdict for people: the terminal table, the Markdown job summary, the PR comment.

Pure: a ``Verdict`` in, a string out. Markdown comes from the jinja2 templates in
``templates/report/`` (shipped as ``ci_shards.templates``); everything that came from tests goes through
``md.py`` first, so it is inert (escaped, mentions defused, control characters stripped, capped).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

import jinja2

from ci_shards.common import templating
from ci_shards.common.console import fmt_seconds, strip_control
from ci_shards.model.failures import FailureKind, FailureRecord
from ci_shards.model.outcome import CaseResult, ShardStatus
from ci_shards.report import md, story
from ci_shards.report.aggregate import ShardResult, Verdict
from ci_shards.report.failures import Detail, Location, failure_counts, fit, group_view, pytest_command
from ci_shards.report.frames import failing_line
from ci_shards.report.groups import FailureGroup, group_failures
from ci_shards.report.triage import Triage
from ci_shards.report.triage_view import triage_context
from ci_shards.select import report as select_report

TERMINAL_LIST_LIMIT = 10


def _one_line(text: str, limit: int = 160) -> str:
    # cleaned before the test: a text of control characters alone (a reason of "\x00\x1b") is empty once cleaned
    lines = strip_control(text).strip().splitlines()
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


EVERY_FAILURE_IN: Final = "the job summary / --failures file"  # the default; aggregate and local name what they wrote


def complete_in(written: list[str], fallback: str) -> str:
    """Where a cut terminal list is complete: the reports this run wrote, else ``fallback`` (issue 27: "see
    the job summary / --failures file" was printed when neither was written)."""
    return " and ".join(written) if written else fallback


def _listing(
    title: str, names: tuple[str, ...] | list[str], every_in: str, limit: int = 160, *, after: str = ""
) -> list[str]:
    """``title (count)``, then ``after`` (what they all share), then the first names, each on one line."""
    if not names:
        return []
    lines = [f"{title} ({len(names)}){after}:"]
    lines += [f"  {_one_line(n, limit)}" for n in names[:TERMINAL_LIST_LIMIT]]
    if len(names) > TERMINAL_LIST_LIMIT:
        lines.append(f"  … and {len(names) - TERMINAL_LIST_LIMIT} more (see {every_in})")
    return lines


def _with_shard(verdict: Verdict) -> list[str]:
    where = story.unplanned_where(verdict)
    return [f"{i} ({where[i]})" if i in verdict.accounting.unplanned_shard else i for i in verdict.accounting.unplanned]


def _missing(verdict: Verdict, every_in: str) -> list[str]:
    """The planned items that never ran, with why (``story.missing_causes``)."""
    shared, each = story.missing_causes(verdict)
    names = [f"{i} — {each[i]}" if i in each else i for i in verdict.accounting.missing]
    after = f" — {_one_line(shared, 400)}" if shared else ""
    return _listing(f"planned {verdict.accounting.unit}s that never ran", names, every_in, after=after)


NOTE_CHARS: Final = 100  # a shard's note in the terminal table


def render_terminal(verdict: Verdict, *, every_in: str = EVERY_FAILURE_IN) -> str:
    """A compact verdict for stderr: the verdict line, one row per shard, then what went wrong; ``every_in``:
    where a cut list is complete (only what was written: ``local`` without --summary has no job summary)."""
    lines = [f"ci-shards: {_one_line(verdict.headline, 400)}", ""]
    # failed and errors apart, as the headline counts them: a never-started shard's items are errors
    header = f"{'shard':>7}  {'status':<15} {'tests':>6} {'failed':>6} {'errors':>6} {'flaky':>5} {'actual':>8} "
    header += f"{'est.':>8}  note"
    lines.append(header)
    for shard in verdict.shards:
        t = shard.totals
        note = shard.reason if not shard.status.is_success else ""
        if not shard.verified:  # the reason (kept short by the cap below) says why: lead with the word
            note = f"unverified: {note}"
        if shard.notes:
            note = (note + "; " if note else "") + f"{len(shard.notes)} earlier attempt(s)/notes"
        lines.append(
            f"{shard.index:>3}/{verdict.total_shards:<3}  {shard.status.value:<15} {t.tests:>6} "
            f"{t.failed:>6} {t.errors:>6} {t.flaky:>5} {fmt_seconds(shard.elapsed_seconds):>8} "
            f"{fmt_seconds(shard.estimated_seconds):>8}  {_one_line(note, NOTE_CHARS)}"
        )
    guessed = story.estimates_note(verdict)
    lines += [f"  (est.: {guessed})"] if guessed else []
    unit = verdict.accounting.unit
    # a reason the table cut is the one place some causes are said in full (a coverage gate, a crash): whole here
    cut = [f"{s.index}/{verdict.total_shards}: {s.reason}" for s in verdict.shards
           if not s.status.is_success and len(s.reason) > NOTE_CHARS]  # fmt: skip
    reasons = _listing("why the shards failed, in full", cut, every_in, limit=400)
    lines += ["", *reasons] if reasons else []
    records = failure_lines(verdict)
    # a file that failed to collect in each shard holding a part of it is one line per shard: say which
    repeated = {t for t, n in Counter(r.test_id for r in records).items() if n > 1}
    failed = [f"{r.test_id}{f' (shard {r.shard})' if r.test_id in repeated else ''} — {r.message}" for r in records]
    flaky = [case.test_id for _index, case in verdict.flaky]
    for block in (
        _listing("failed tests", failed, every_in),
        _listing("flaky tests", flaky, every_in),
        _missing(verdict, every_in),
        _listing(f"{unit}s that ran more than once", verdict.accounting.duplicated, every_in),
        _listing(
            # not only new tests: a discovery plan names none that a conftest hook makes, nor those a class
            # imported from another test file gives a file it cut (docs/planning.md)
            f"{unit}s that ran, not planned (new since the plan, or ones it could not name; not a failure)",
            _with_shard(verdict),
            every_in,
        ),
        _listing("notes", list(verdict.notes), every_in),
    ):
        if block:
            lines += ["", *block]
    if verdict.selection is not None:
        lines += ["", *(_one_line(line, 400) for line in select_report.terminal_lines(verdict.selection))]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Markdown (job summary and PR comment)

# GitHub drops a step summary over 1 MiB whole, not cut (workflow-commands docs, "Step isolation and limits");
# keep a margin.
SUMMARY_BUDGET_BYTES: Final = 1_000_000
# A PR comment body is capped at 65,536 characters (API error "Body is too long (maximum is 65536
# characters)"); keep a margin.
COMMENT_BUDGET_CHARS: Final = 60_000
MARKER_PREFIX: Final = "<!-- ci-shards:"

_STATUS_ICON: Final = {
    ShardStatus.PASSED: "✅",
    ShardStatus.EMPTY: "⚪",
    ShardStatus.SKIPPED_BY_DIFF: "⏭️",
    ShardStatus.FAILED: "❌",
    ShardStatus.TIMED_OUT: "⏱️",
    ShardStatus.NEVER_STARTED: "🚫",
    ShardStatus.CANCELLED: "🛑",
    ShardStatus.ERROR: "💥",
}
_BAD_KINDS: Final = (FailureKind.FAILED, FailureKind.ERROR, FailureKind.TIMED_OUT)


def failure_lines(verdict: Verdict) -> list[FailureRecord]:
    """The failures of tests a reader acts on (failed, errored, timed out; not flaky, not-run or
    shard-level records, which the reports show apart): the failures section, the terminal list and
    what ``local`` prints after its table."""
    return [r for r in verdict.failures if r.kind in _BAD_KINDS]


class Flavor(str, Enum):
    SUMMARY = "summary"
    COMMENT = "comment"


@dataclass(frozen=True)
class _Limits:
    budget: int
    in_bytes: bool
    trace_chars: int
    message_chars: int
    list_limit: int  # flaky / missing / slowest entries shown
    failure_details: int  # failure groups shown with their trace
    shard_rows: int  # beyond this many shards, only those that did not pass get a row
    ids_per_group: int  # test ids listed under a group of identical failures
    reproduce_ids: int  # test ids in the copy-paste pytest command
    reproduce_chars: int  # … and its size


_LIMITS: Final = {
    Flavor.SUMMARY: _Limits(SUMMARY_BUDGET_BYTES, True, 4000, 500, 100, 500, 1000, 100, 100, 8000),
    Flavor.COMMENT: _Limits(COMMENT_BUDGET_CHARS, False, 1200, 300, 20, 20, 30, 10, 20, 2000),
}


def _environment() -> jinja2.Environment:
    return templating.environment("report")  # Markdown: every untrusted value is made inert by md.py first


def comment_marker(key: str) -> str:
    """The hidden first line that finds our comment again (one per workflow and job)."""
    safe = "".join(ch for ch in key if ch.isalnum() or ch in "-_./") or "default"
    return f"{MARKER_PREFIX}{safe[:100]} -->"


def _pct(actual: float, estimated: float) -> str:
    if estimated <= 0:
        return "–"
    return f"{(actual - estimated) / estimated * 100:+.0f}%"


def _shard_row(shard: ShardResult, total: int) -> dict[str, Any]:
    t = shard.totals
    note = shard.reason if not shard.status.is_success else ""
    if not shard.verified:  # aggregate's reason already says that its results could not be matched
        note = f"unverified: {note}"
    if shard.notes:
        note = (note + "; " if note else "") + "; ".join(shard.notes)
    return {
        "name": f"{shard.index}/{total}",
        "icon": _STATUS_ICON[shard.status],
        "status": shard.status.value,
        "tests": t.tests,
        "failed": t.failed,
        "errors": t.errors,
        "flaky": t.flaky,
        "actual": fmt_seconds(shard.elapsed_seconds),
        "estimated": fmt_seconds(shard.estimated_seconds),
        "delta": _pct(shard.elapsed_seconds, shard.estimated_seconds) if shard.source else "–",
        "note": md.inline(note, 300),
    }


def _mermaid(verdict: Verdict) -> str:
    """A mermaid xychart of actual (bars) vs estimated (line) seconds per shard: numbers only."""
    shards = verdict.shards
    if not shards or len(shards) > 100:  # beyond ~100 bars the chart is unreadable; the table stays
        return ""
    labels = ", ".join(str(s.index) for s in shards)
    actual = ", ".join(f"{s.elapsed_seconds:.1f}" for s in shards)
    estimated = ", ".join(f"{s.estimated_seconds:.1f}" for s in shards)
    top = max([s.elapsed_seconds for s in shards] + [s.estimated_seconds for s in shards] + [1.0])
    return (
        "```mermaid\nxychart-beta\n"
        '  title "Shard durations: actual (bars) vs estimated (line), seconds"\n'
        f'  x-axis "shard" [{labels}]\n'
        f'  y-axis "seconds" 0 --> {top * 1.1:.0f}\n'
        f"  bar [{actual}]\n"
        f"  line [{estimated}]\n```"
    )


def _size(text: str, limits: _Limits) -> int:
    return len(text.encode()) if limits.in_bytes else len(text)


def _missing_context(verdict: Verdict, limit: int) -> dict[str, Any]:
    """The planned items that never ran, each with its cause unless one cause is shared (``story.missing_causes``)."""
    shared, each = story.missing_causes(verdict)
    missing = verdict.accounting.missing
    rows = [md.code_inline(i) + (f" — {md.inline(each[i], 300)}" if i in each else "") for i in missing[:limit]]
    return {"missing": rows, "missing_total": len(missing), "missing_cause": md.inline(shared, 400)}


def _context(
    verdict: Verdict, flavor: Flavor, limits: _Limits, views: list[dict[str, Any]], groups: list[FailureGroup]
) -> dict[str, Any]:
    acc = verdict.accounting
    shard_level = [r for r in verdict.failures if r.kind is FailureKind.SHARD]
    cases = verdict.cases
    flaky = verdict.flaky
    lower = verdict.lower_bound_seconds
    actual = verdict.actual_makespan
    t = verdict.totals
    shown_shards = list(verdict.shards)
    if len(shown_shards) > limits.shard_rows:  # a comment about 256 shards lists the ones that need a look
        shown_shards = [s for s in verdict.shards if not s.status.is_success or s.notes][: limits.shard_rows]
    return {
        "flavor": flavor.value,
        "passed": verdict.passed,
        "headline_reasons": [md.inline(r, 400) for r in verdict.reasons],
        "totals": t,
        "wall": fmt_seconds(actual),
        "shard_count": verdict.total_shards,
        "shards": [_shard_row(s, verdict.total_shards) for s in shown_shards],
        "shards_hidden": len(verdict.shards) - len(shown_shards),
        "chart": _mermaid(verdict) if flavor is Flavor.SUMMARY else "",
        "failures": views,
        "failures_heading": failure_counts(t),
        "groups_total": len(groups),
        "failures_total": sum(g.count for g in groups),
        "failures_cut": sum(g.count for g in groups[len(views) :]),
        "groups_cut": len(groups) - len(views),
        "shard_failures": [
            {"shard": r.shard, "message": md.inline(r.message, 400)} for r in shard_level[: limits.list_limit]
        ],
        "flaky": story.flaky_rows(flaky, limits.list_limit, limits.trace_chars if flavor is Flavor.SUMMARY else 0),
        "flaky_total": len(flaky),
        "unit": acc.unit,
        **_missing_context(verdict, limits.list_limit),
        "duplicated": [md.code_inline(i) for i in acc.duplicated[: limits.list_limit]],
        "duplicated_total": len(acc.duplicated),
        "unplanned": [
            {"id": md.code_inline(i), "where": where}
            for i, where in list(story.unplanned_where(verdict).items())[: limits.list_limit]
        ],
        "unplanned_total": len(acc.unplanned),
        "unverified": list(acc.unverified_shards),
        "slowest": story.slowest(cases, min(10, limits.list_limit)),
        "skips": story.skip_reasons(cases, limits.list_limit),
        "expected": story.expected_failures(cases, limits.list_limit),
        "estimates_note": md.inline(story.estimates_note(verdict), 300),
        "plan": {
            "lower": fmt_seconds(lower),
            "estimated": fmt_seconds(verdict.estimated_makespan),
            "actual": fmt_seconds(actual),
            "ratio": f"{actual / lower:.2f}×" if lower > 0 else "–",
            "planned": acc.planned,
        },
        "notes": [md.inline(n, 400) for n in verdict.notes[: limits.list_limit]],
        "list_limit": limits.list_limit,
    }


def render_markdown(
    verdict: Verdict,
    *,
    flavor: Flavor = Flavor.SUMMARY,
    marker: str = "",
    artifacts_hint: str = "the merged JUnit and failures.jsonl artifacts",
    run_url: str = "",
    triage: Triage | None = None,
    shard_links: Mapping[int, str] | None = None,
) -> str:
    """The job summary (``Flavor.SUMMARY``, < 1 MiB) or PR comment (``Flavor.COMMENT``, < 65,536
    characters). Failures that do not fit are cut with a visible notice pointing to the artifacts.
    ``shard_links``: shard index → its job log (joblinks.job_links), for the shards that did not pass."""
    limits = _LIMITS[flavor]
    template = _environment().get_template("verdict.md.j2")
    cases = {c.test_id: c for c in verdict.cases}
    types = {test_id: c.type for test_id, c in cases.items() if c.type}
    groups = group_failures(failure_lines(verdict), types)
    detail = Detail(limits.trace_chars, limits.message_chars, limits.ids_per_group)
    # no report can show more than budget/60 entries: never build views for the rest
    candidates = [group_view(g, detail, _location(g.first, cases)) for g in groups[: limits.budget // 60]]

    reproduce = _reproduce(groups, shard_links or {}, limits, every=list(cases))
    history = triage_context(triage, list_limit=limits.list_limit, summary=flavor is Flavor.SUMMARY)

    def render(shown: int, with_trace: int) -> str:
        views = [dict(v, trace=v["trace"] if i < with_trace else "") for i, v in enumerate(candidates[:shown])]
        context = _context(verdict, flavor, limits, views, groups)
        text: str = template.render(
            **context,
            **reproduce,
            marker=marker,
            artifacts_hint=md.inline(artifacts_hint),
            run_url=_safe_url(run_url),
            history=history,
        )
        return text

    skeleton = _size(render(0, 0), limits)
    shown, with_trace = fit(
        candidates, limits.budget - skeleton - 500, in_bytes=limits.in_bytes, details=limits.failure_details
    )
    text = render(shown, with_trace)
    while _size(text, limits) > limits.budget and shown > 0:  # the estimate was short: shrink and re-check
        with_trace //= 2
        shown = shown * 3 // 4
        text = render(shown, with_trace)
    if _size(text, limits) > limits.budget:  # pathological (e.g. a million shards): hard cut, still valid
        text = _hard_cut(text, limits)
    return text


def _location(record: FailureRecord, cases: Mapping[str, CaseResult]) -> Location:
    """The failing line from the trace; the test's own (``def``) line from the report."""
    case = cases.get(record.test_id)
    line = case.line if case is not None else None
    test = f"{record.file}:{line}" if record.file and line else ""
    frame = failing_line(record.text, record.file)
    return Location(failing=str(frame) if frame else "", test=test, file=record.file or "")


def _reproduce(
    groups: list[FailureGroup], shard_links: Mapping[int, str], limits: _Limits, *, every: list[str]
) -> dict[str, Any]:
    """The "Reproduce" section: a pytest command for the failing tests, and each failing shard's job log."""
    command, left_out = pytest_command(
        groups, max_ids=limits.reproduce_ids, max_chars=limits.reproduce_chars, every=every
    )
    links = [{"shard": i, "url": _safe_url(url)} for i, url in sorted(shard_links.items()) if _safe_url(url)]
    return {
        "reproduce": md.code_block(command, limits.reproduce_chars + 100, lang="sh") if command else "",
        "reproduce_more": left_out,
        "job_links": links,
    }


def _safe_url(url: str) -> str:
    """A link target we built from the environment (server/repo/run id); anything odd is dropped."""
    return url if re.fullmatch(r"https?://[A-Za-z0-9._~:/?#@!$&'*+,;=%-]+", url) and "(" not in url else ""


def _hard_cut(text: str, limits: _Limits) -> str:
    notice = "\n\n> [!WARNING]\n> This report was cut to fit GitHub's size limit.\n"
    room = limits.budget - _size(notice, limits) - 16
    data = text.encode()[:room].decode(errors="ignore") if limits.in_bytes else text[:room]
    cut = data.rfind("\n\n")
    data = data[:cut] if cut > 0 else data
    fence = md.open_fence(data)
    if fence:
        data += "\n" + fence
    return data + notice


def _selection(verdict: Verdict) -> str:
    return select_report.markdown(verdict.selection) if verdict.selection is not None else ""


def render_summary(verdict: Verdict, **kwargs: Any) -> str:
    return render_markdown(verdict, flavor=Flavor.SUMMARY, **kwargs) + _selection(verdict)


def render_comment(verdict: Verdict, *, key: str, **kwargs: Any) -> str:
    return render_markdown(verdict, flavor=Flavor.COMMENT, marker=comment_marker(key), **kwargs) + _selection(verdict)
