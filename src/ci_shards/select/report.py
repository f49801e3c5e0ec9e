"""What the selection did, for the verdict: skipped items by rule, and shadow mode's would-be misses. Pure.

Shadow mode planned and ran everything, so the run itself measures the selection: of the items it
would have skipped, how many tests and how much test time, and which of their tests failed (a miss:
a skipped run would have passed without them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ci_shards.model.matching import owning_item
from ci_shards.model.outcome import CaseResult
from ci_shards.model.plan import Plan
from ci_shards.report import md

MD_LISTED = 50  # items per rule / misses listed in Markdown before "and N more"
MD_BUDGET = 20_000  # characters: the section must leave the PR comment room under GitHub's 65,536


@dataclass(frozen=True, kw_only=True)
class SelectionReport:
    lines: tuple[str, ...]  # the decision, one line each (plan.json "selection")
    skipped: Mapping[str, str] = field(default_factory=dict)  # select changed: item → rule
    would_skip: Mapping[str, str] = field(default_factory=dict)  # select shadow: item → rule
    planned_tests: int = 0  # shadow: tests that ran
    would_skip_tests: int = 0
    total_seconds: float = 0.0
    would_skip_seconds: float = 0.0
    misses: tuple[str, ...] = ()  # shadow: failed tests the selection would have skipped

    def to_json(self) -> dict[str, Any]:
        """The verdict JSON's ``selection``: skipped items counted and listed apart, shadow figures and misses."""
        data: dict[str, Any] = {"lines": list(self.lines), "skipped_by_diff": dict(sorted(self.skipped.items()))}
        if self.would_skip:
            data["shadow"] = {
                "would_skip": dict(sorted(self.would_skip.items())),
                "tests": self.planned_tests,
                "would_skip_tests": self.would_skip_tests,
                "seconds": round(self.total_seconds, 3),
                "would_skip_seconds": round(self.would_skip_seconds, 3),
                "misses": list(self.misses),
            }
        return data

    @property
    def shadow_line(self) -> str:
        share = self.would_skip_seconds / self.total_seconds * 100 if self.total_seconds > 0 else 0.0
        return (
            f"would have skipped {self.would_skip_tests} of {self.planned_tests} tests ({share:.1f} % of test time);"
            f" of those, {len(self.misses)} failed"
        )


def selection_report(plan: Plan, cases: Iterable[CaseResult]) -> SelectionReport | None:
    """The report for a plan made with ``--select changed|shadow`` (None without a selection)."""
    if not plan.selection:
        return None
    if not plan.would_skip:
        return SelectionReport(lines=plan.selection, skipped=plan.skipped_by_diff)
    planned = frozenset(plan.items)
    tests = counted = 0
    total = skipped_seconds = 0.0
    misses: list[str] = []
    for case in cases:
        owner = owning_item(case.test_id, planned)
        if owner is None:
            continue
        tests += 1
        total += case.time
        if owner in plan.would_skip:
            counted += 1
            skipped_seconds += case.time
            if case.outcome.is_bad:
                misses.append(case.test_id)
    return SelectionReport(
        lines=plan.selection,
        would_skip=plan.would_skip,
        planned_tests=tests,
        would_skip_tests=counted,
        total_seconds=total,
        would_skip_seconds=skipped_seconds,
        misses=tuple(sorted(set(misses))),
    )


def _by_rule(rules: Mapping[str, str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for item, rule in sorted(rules.items()):
        grouped.setdefault(rule, []).append(item)
    return grouped


def _listed(names: list[str]) -> list[str]:
    lines = [f"- {md.inline(n)}" for n in names[:MD_LISTED]]
    if len(names) > MD_LISTED:
        lines.append(f"- … and {len(names) - MD_LISTED} more (plan.json lists them all)")
    return lines


def terminal_lines(report: SelectionReport) -> list[str]:
    lines = [f"selection: {line}" for line in report.lines]
    if report.skipped:
        lines.append(f"selection: {len(report.skipped)} items skipped by the diff (skipped-by-diff, a success)")
    if report.would_skip:
        lines.append(f"selection (shadow): {report.shadow_line}")
        lines += [f"selection (shadow) MISS: {test} failed and would have been skipped" for test in report.misses]
    return lines


def markdown(report: SelectionReport) -> str:
    """The summary / PR comment section: decision, skipped items collapsed by rule, shadow misses."""
    out = ["", "### 🎯 Change-based selection", ""]
    out += [f"- {md.inline(line)}" for line in report.lines]
    if report.skipped:
        out += [
            "",
            f"<details><summary>{len(report.skipped)} items skipped by the diff (skipped-by-diff)</summary>",
            "",
        ]
        for rule, items in _by_rule(report.skipped).items():
            out += [f"**{md.inline(rule)}** ({len(items)})", "", *_listed(items), ""]
        out += ["</details>"]
    if report.would_skip:
        out += ["", f"**Shadow mode: {md.inline(report.shadow_line)}**"]
        if report.misses:
            out += ["", f"> [!CAUTION]\n> {len(report.misses)} failed tests would have been skipped (misses):", ""]
            out += _listed(list(report.misses))
    text = "\n".join(out) + "\n"
    if len(text) > MD_BUDGET:
        cut = text.rfind("\n", 0, MD_BUDGET - 200)
        text = text[:cut] + "\n\n… (cut to fit; plan.json lists every skipped item)\n"
        if text.count("<details>") > text.count("</details>"):
            text += "\n</details>\n"
    return text
