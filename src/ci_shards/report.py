"""Rendering a verdict for people: the terminal table, the Markdown job summary, the PR comment.

Pure: a ``Verdict`` in, a string out. Markdown comes from the jinja2 templates in
``templates/`` (shipped as package data); everything that came from tests goes through
``md.py`` first, so it is inert (escaped, mentions defused, control characters stripped, capped).
"""

from __future__ import annotations

from ci_shards.aggregate import Verdict
from ci_shards.console import strip_control

TERMINAL_LIST_LIMIT = 10


def _one_line(text: str, limit: int = 160) -> str:
    line = strip_control(text).strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def fmt_seconds(seconds: float) -> str:
    """``0.4s``, ``12.3s``, ``4m 05s``, ``1h 02m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def _listing(title: str, names: tuple[str, ...] | list[str]) -> list[str]:
    if not names:
        return []
    lines = [f"{title} ({len(names)}):"]
    lines += [f"  {_one_line(n)}" for n in names[:TERMINAL_LIST_LIMIT]]
    if len(names) > TERMINAL_LIST_LIMIT:
        lines.append(f"  … and {len(names) - TERMINAL_LIST_LIMIT} more (see the job summary / --failures file)")
    return lines


def render_terminal(verdict: Verdict) -> str:
    """A compact verdict for stderr: the verdict line, one row per shard, then what went wrong."""
    lines = [f"ci-shards: {_one_line(verdict.headline, 400)}", ""]
    header = f"{'shard':>7}  {'status':<15} {'tests':>6} {'failed':>6} {'flaky':>5} {'actual':>8} {'est.':>8}  note"
    lines.append(header)
    for shard in verdict.shards:
        t = shard.totals
        note = shard.reason if not shard.status.is_success else ""
        if not shard.verified:
            note = (note + "; " if note else "") + "results not matched to the plan (unverified)"
        if shard.notes:
            note = (note + "; " if note else "") + f"{len(shard.notes)} earlier attempt(s)/notes"
        lines.append(
            f"{shard.index:>3}/{verdict.total_shards:<3}  {shard.status.value:<15} {t.tests:>6} "
            f"{t.failed + t.errors:>6} {t.flaky:>5} {fmt_seconds(shard.elapsed_seconds):>8} "
            f"{fmt_seconds(shard.estimated_seconds):>8}  {_one_line(note, 100)}"
        )
    unit = verdict.accounting.unit
    failed = [
        f"{r.test_id} — {r.message}" for r in verdict.failures if r.kind.value in ("failed", "error", "timed-out")
    ]
    flaky = [case.test_id for _index, case in verdict.flaky]
    for title, names in (
        ("failed tests", failed),
        ("flaky tests", flaky),
        (f"planned {unit}s that never ran", verdict.accounting.missing),
        (f"{unit}s that ran more than once", verdict.accounting.duplicated),
        (f"{unit}s that ran but were never planned", verdict.accounting.unplanned),
        ("notes", list(verdict.notes)),
    ):
        block = _listing(title, names)
        if block:
            lines += ["", *block]
    return "\n".join(lines) + "\n"
