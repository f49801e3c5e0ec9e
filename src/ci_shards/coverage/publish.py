"""Fold, write and judge: the aggregate stage's coverage step (``aggregate --coverage-out DIR``, ``local --coverage``).

Writes ``coverage.json``, ``coverage.xml`` (Cobertura) and ``lcov.info`` into the output folder,
renders the summary section and applies ``--fail-under``: the gate fails the verdict only on
complete coverage; partial coverage with ``--fail-under`` fails with its own reason.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

from ci_shards.common import outfile
from ci_shards.common.console import Console
from ci_shards.common.errors import EXIT_FAILED, EXIT_OK, CiShardsError, InputError, UsageError
from ci_shards.coverage import diffcov, fold, summary, writers
from ci_shards.coverage.artifact import CoverageArtifact
from ci_shards.coverage.collect import INSTALL_HINT, Tool
from ci_shards.model.fields import rfc3339
from ci_shards.model.plan import Plan
from ci_shards.report import md

JSON_FILE: Final = "coverage.json"
XML_FILE: Final = "coverage.xml"
LCOV_FILE: Final = "lcov.info"
# the keys of ``aggregate --format json``'s ``coverage`` object, the same whether or not the fold succeeded
FIGURES: Final = ("state", "label", "percent", "statements", "executed_lines", "diff_percent", "gate", "files", "error")


@dataclass(frozen=True, kw_only=True)
class Published:
    artifact: CoverageArtifact
    markdown: str
    gate_reason: str
    diff: diffcov.DiffCoverage | None  # None: no changed lines to measure (no base, or outside git)
    out: Path  # the folder coverage.json, coverage.xml and lcov.info were written into

    @property
    def exit_code(self) -> int:
        return EXIT_FAILED if self.gate_reason else EXIT_OK

    def figures(self) -> dict[str, Any]:
        """The figures ``aggregate --format json`` prints under ``coverage``: no percentage when partial."""
        totals = self.artifact.totals
        return {
            "state": "complete" if self.artifact.completeness.complete else "partial",
            "label": self.artifact.label,
            "percent": self.artifact.percent,
            "statements": totals.statements,
            "executed_lines": totals.executed,
            "diff_percent": None if self.diff is None else self.diff.percent,
            "gate": self.gate_reason or None,
            "files": str(self.out / JSON_FILE),
            "error": None,
        }

    def console_line(self) -> str:
        figure = f": {self.artifact.percent:.2f} %" if self.artifact.percent is not None else " (no percentage)"
        return f"ci-shards: coverage {self.artifact.label}{figure}"


def publish(
    plan: Plan,
    dirs: Sequence[Path],
    *,
    out: Path,
    root: Path,
    fail_under: float | None,
    base: str | None,
    env: Mapping[str, str],
) -> Published:
    if fail_under is not None and not 0 <= fail_under <= 100:
        msg = f"--fail-under {fail_under:g}: expected a percentage from 0 to 100"
        raise UsageError(msg)
    commit = env.get("GITHUB_SHA") or fold.git_commit(root)
    artifact = _fold(plan, dirs, root=root, commit=commit, created_at=rfc3339(datetime.now(timezone.utc)))
    diff, skipped = _diff(artifact, root, diffcov.base_ref(base, env))
    reason = summary.gate(artifact, fail_under)
    try:
        out.mkdir(parents=True, exist_ok=True)
        outfile.write_atomic(out / JSON_FILE, artifact.dumps())
        outfile.write_atomic(out / XML_FILE, writers.cobertura(artifact))
        outfile.write_atomic(out / LCOV_FILE, writers.lcov(artifact))
    except OSError as err:
        raise InputError(out, f"cannot write the coverage files: {err.strerror or err}") from None
    markdown = summary.render_section(artifact, diff=diff, diff_skipped=skipped, gate_reason=reason)
    return Published(artifact=artifact, markdown=markdown, gate_reason=reason, diff=diff, out=out)


@dataclass(frozen=True, kw_only=True)
class Reported:
    """What aggregate and local take from the coverage step: the summary section, the exit code to join the
    verdict's, and the figures for ``--format json`` (``error`` set when nothing could be folded)."""

    markdown: str
    exit_code: int
    figures: Mapping[str, Any]


def publish_reported(
    plan: Plan,
    dirs: Sequence[Path],
    *,
    out: Path,
    root: Path,
    fail_under: float | None,
    base: str | None,
    env: Mapping[str, str],
    console: Console,
) -> Reported:
    """``publish`` for aggregate and local: the summary section, exit code and figures (``Reported``).

    A coverage problem (no coverage.py here, an unwritable DIR) is said on the console and in the
    section and exits 2 at the end: it never costs the verdict its summary, comment or timings."""
    try:
        result = publish(plan, dirs, out=out, root=root, fail_under=fail_under, base=base, env=env)
    except CiShardsError as err:
        console.error(f"ci-shards: coverage: {err}")
        section = f"### Coverage\n\n:x: not folded: {md.inline(str(err))}\n"
        figures = {**dict.fromkeys(FIGURES), "state": "error", "error": str(err)}
        return Reported(markdown=section, exit_code=err.exit_code, figures=figures)
    console.line(result.console_line())
    if result.gate_reason:
        console.error(f"ci-shards: {result.gate_reason}")
    return Reported(markdown=result.markdown, exit_code=result.exit_code, figures=result.figures())


def _fold(plan: Plan, dirs: Sequence[Path], *, root: Path, commit: str, created_at: str) -> CoverageArtifact:
    """V8 when the shards measured Node, else coverage.py (which must then be installed here)."""
    _states, folded = fold.shard_states(plan, dirs)
    tools = {str((s.outcome.coverage or {}).get("tool")) for s in folded if s.outcome is not None}
    if Tool.V8.value in tools:
        from ci_shards.coverage.fold_node import fold_v8  # noqa: PLC0415

        return fold_v8(plan, dirs, root=root, commit=commit, created_at=created_at)
    if importlib.util.find_spec("coverage") is None:
        msg = f"coverage needs coverage.py here to fold the shards' data: {INSTALL_HINT}"
        raise UsageError(msg)
    return fold.fold_python(plan, dirs, root=root, commit=commit, created_at=created_at)


def _diff(artifact: CoverageArtifact, root: Path, base: str | None) -> tuple[diffcov.DiffCoverage | None, str]:
    if base is None:
        return None, "no base known: pass --coverage-base REF (on a pull request the base branch is used)"
    text, problem = diffcov.git_diff(root, base)
    if text is None:
        return None, problem
    return diffcov.diff_coverage(artifact, diffcov.changed_lines(text), base=base), ""
