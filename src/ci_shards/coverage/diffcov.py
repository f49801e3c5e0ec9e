"""Coverage of the lines a change touched (diff coverage): the number reviewers look at.

``changed_lines`` parses ``git diff --unified=0`` (pure); ``diff_coverage`` intersects the changed
lines with the folded coverage. ``git_diff`` is the one edge: it runs git against the base.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ci_shards.coverage.artifact import CoverageArtifact

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _unquote(name: str) -> str:
    """git's C-style quoting of unusual file names ("a b\\303\\251.py")."""
    if not (name.startswith('"') and name.endswith('"')):
        return name
    raw = name[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1")
    return raw.decode("utf-8", "replace")


def changed_lines(diff: str) -> dict[str, set[int]]:
    """New-side line numbers added or changed per file, from ``git diff --unified=0`` output."""
    result: dict[str, set[int]] = {}
    current: str | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            target = _unquote(line[4:].rstrip("\t"))
            current = target[2:] if target.startswith("b/") else None  # /dev/null: a deleted file
            continue
        match = _HUNK.match(line)
        if match and current is not None:
            start, count = int(match.group(1)), int(match.group(2) or "1")
            result.setdefault(current, set()).update(range(start, start + count))
    return {path: lines for path, lines in result.items() if lines}


@dataclass(frozen=True, kw_only=True)
class DiffCoverage:
    base: str
    covered: int
    uncovered: Mapping[str, tuple[int, ...]]  # file -> changed statements no test executed

    @property
    def statements(self) -> int:
        return self.covered + sum(len(v) for v in self.uncovered.values())

    @property
    def percent(self) -> float | None:
        return round(100 * self.covered / self.statements, 2) if self.statements else None


def diff_coverage(artifact: CoverageArtifact, changed: Mapping[str, set[int]], *, base: str) -> DiffCoverage:
    """Changed lines that are statements: how many ran, and which did not (non-statements do not count)."""
    covered = 0
    uncovered: dict[str, tuple[int, ...]] = {}
    for path, lines in sorted(changed.items()):
        f = artifact.file(path)
        if f is None:
            continue
        covered += len(lines & set(f.executed))
        missed = tuple(sorted(lines & set(f.missed)))
        if missed:
            uncovered[path] = missed
    return DiffCoverage(base=base, covered=covered, uncovered=uncovered)


def base_ref(explicit: str | None, env: Mapping[str, str]) -> str | None:
    """``--coverage-base``, else the PR's base branch on GitHub (``origin/$GITHUB_BASE_REF``), else none."""
    if explicit:
        return explicit
    if env.get("GITHUB_BASE_REF"):
        return f"origin/{env['GITHUB_BASE_REF']}"
    return None


def git_diff(root: Path, base: str) -> tuple[str | None, str]:
    """(diff text, "") or (None, why not): the change against the merge base with ``base``."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(
            ["git", "-c", "core.quotepath=on", "diff", "--unified=0", "--no-color", "--no-ext-diff", f"{base}...HEAD"],
            cwd=root,
            capture_output=True,
            check=False,
            timeout=120,
        )
        if done.returncode == 0:
            return done.stdout.decode("utf-8", "replace"), ""
        return None, f"git diff {base}...HEAD failed: {done.stderr.decode('utf-8', 'replace').strip()[:200]}"
    return None, "git is not available"
