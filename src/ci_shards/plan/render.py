"""Plan as text for people: a terminal table or Markdown (job summaries). Pure: plan in, string out."""

from __future__ import annotations

from ci_shards.model.matching import item_file
from ci_shards.model.plan import Plan


def _md(text: str) -> str:
    """Markdown-inert text for a table cell: no HTML, no pipes, no emphasis, no links."""
    for char in "\\`*_[]<>|#!~":
        text = text.replace(char, "\\" + char)
    return text.replace("\n", " ")


def _rows(plan: Plan) -> list[tuple[str, str, str, str]]:
    rows = []
    for shard in plan.shards:
        files = len({item_file(i) for i in shard.items})
        state = "" if shard.items else " (empty)"
        rows.append(
            (f"{shard.index}/{plan.total}", str(len(shard.items)), str(files), f"{shard.estimated_seconds:.1f}{state}")
        )
    return rows


def _summary(plan: Plan) -> list[str]:
    makespan = plan.estimated_makespan
    ratio = f"ratio {makespan / plan.lower_bound_seconds:.3f}" if plan.lower_bound_seconds else "ratio n/a"
    if plan.unknown_items:
        # a ratio over guesses says nothing about balance: only measured seconds count
        measured = "n/a" if plan.measured_ratio is None else f"{plan.measured_ratio:.3f}"
        ratio = f"ratio {measured} over measured items; {plan.unknown_items} of {len(plan.items)} items guessed"
    overhead = plan.shard_overhead_seconds
    with_overhead = f" + {overhead:.1f} s per-shard overhead = {makespan + overhead:.1f} s" if overhead else ""
    return [
        f"slowest shard {makespan:.1f} s{with_overhead}; lower bound {plan.lower_bound_seconds:.1f} s ({ratio})",
        f"granularity {plan.granularity.value}; files cut {plan.files_cut}; unknown items {plan.unknown_items}",
        f"digest {plan.digest}",
    ]


def render_plan(plan: Plan, output_format: str) -> str:
    """``table`` (aligned text) or ``markdown``."""
    header = ("shard", "items", "files", "estimated s")
    rows = _rows(plan)
    if output_format == "markdown":
        lines = ["| " + " | ".join(header) + " |", "|---|--:|--:|--:|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        lines.append("")
        lines += [f"- {_md(line)}" for line in _summary(plan)]
        lines += [f"- {_md(note)}" for note in plan.notes]
        return "\n".join(lines) + "\n"
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        for r in [header, *rows]
    ]
    lines += _summary(plan)
    return "\n".join(lines) + "\n"
