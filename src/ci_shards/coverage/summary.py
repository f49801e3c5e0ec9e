"""The coverage section of the job summary and PR comment, and the ``--fail-under`` gate. Pure.

Rendered from its own template (``templates/report/coverage.md.j2``) and appended after the verdict's
Markdown, so the verdict's report stays untouched. Completeness comes first: a partial result
shows its label and how to re-collect, never a percentage (nor per-package or diff figures).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable, Sequence

from ci_shards.common import templating
from ci_shards.coverage.artifact import RECOLLECT, CoverageArtifact, FileCoverage, Totals
from ci_shards.coverage.diffcov import DiffCoverage
from ci_shards.report import md

# a PR comment holds at most 65,536 characters, shared with the verdict: the section stays well below
MAX_UNCOVERED_FILES = 30
MAX_PACKAGES = 100
MAX_RANGES_CHARS = 300


def gate(artifact: CoverageArtifact, fail_under: float | None) -> str:
    """Why ``--fail-under`` fails the verdict ("" when it passes or is not asked)."""
    if fail_under is None:
        return ""
    if artifact.percent is None:
        return f"--fail-under {fail_under:g}: coverage is {artifact.label}, so it cannot be checked"
    if artifact.percent < fail_under:
        return f"--fail-under {fail_under:g}: coverage {artifact.percent:.2f} % is below {fail_under:g} %"
    return ""


def ranges(lines: Iterable[int]) -> str:
    """``3, 5-7, 10``."""
    out: list[str] = []
    run: list[int] = []
    for n in sorted(set(lines)):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [n]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ", ".join(out)


def _pct(t: Totals) -> str:
    return f"{100 * t.ratio:.1f} %"


def _packages(files: Sequence[FileCoverage]) -> list[dict[str, str]]:
    by_package: dict[str, list[FileCoverage]] = defaultdict(list)
    for f in files:
        by_package[posixpath.dirname(f.path) or "."].append(f)
    rows = []
    for name, group in sorted(by_package.items())[:MAX_PACKAGES]:
        t = Totals.of(group)
        rows.append(
            {
                "name": md.code_inline(name),
                "files": str(len(group)),
                "statements": str(t.statements),
                "executed": str(t.executed),
                "percent": _pct(t),
            }
        )
    if len(by_package) > MAX_PACKAGES:
        more = len(by_package) - MAX_PACKAGES
        rows.append({"name": f"… and {more} more", "files": "", "statements": "", "executed": "", "percent": ""})
    return rows


def _diff_lines(artifact: CoverageArtifact, diff: DiffCoverage | None, skipped: str) -> tuple[str, list[str]]:
    if not artifact.completeness.complete:
        return "_Changed lines: not computed for partial coverage._", []
    if diff is None:
        return f"_Changed lines: skipped ({md.inline(skipped)})._", []
    base = md.code_inline(diff.base)
    if diff.percent is None:
        return f"**Changed lines** against {base}: no changed statements.", []
    head = f"**Changed lines** against {base}: **{diff.percent:.1f} %** ({diff.covered}/{diff.statements})"
    items = [
        f"{md.code_inline(path)}: {md.cap(ranges(lines), MAX_RANGES_CHARS)}" for path, lines in diff.uncovered.items()
    ]
    if len(items) > MAX_UNCOVERED_FILES:
        items = [*items[:MAX_UNCOVERED_FILES], f"… and {len(items) - MAX_UNCOVERED_FILES} more files"]
    return head + (", not executed:" if items else "."), items


def render_section(
    artifact: CoverageArtifact, *, diff: DiffCoverage | None, diff_skipped: str = "", gate_reason: str = ""
) -> str:
    t = artifact.totals
    branches = f", branches {t.branches_executed}/{t.branches}" if artifact.branch else ""
    diff_line, uncovered = _diff_lines(artifact, diff, diff_skipped)
    env = templating.environment("report")  # Markdown; values are made inert by md.py
    return env.get_template("coverage.md.j2").render(
        complete=artifact.completeness.complete,
        label=md.inline(artifact.label),
        percent=f"{artifact.percent:.2f} %" if artifact.percent is not None else "",
        lines=f"lines {t.executed}/{t.statements}",
        branches=branches,
        recollect=md.inline(RECOLLECT.capitalize() + "."),
        gate=md.inline(gate_reason),
        packages=_packages(artifact.files) if artifact.completeness.complete else [],
        diff=diff_line,
        uncovered=uncovered,
        notes=[md.inline(n) for n in artifact.notes],
    )
