"""Answers about one line, and the artifact's freshness: pure (the artifact and today's file digests in).

A recorded answer is used only while the file's digest still matches the one measured: otherwise the
answer is ``STALE`` (``STALE (missing)`` when the file is gone), because nothing recorded describes
the code any more. Every answer a reader must not act on carries how to re-collect.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ci_shards.common.console import one_line
from ci_shards.coverage.artifact import RECOLLECT, CoverageArtifact


class Answer(Enum):
    EXECUTED = "EXECUTED"
    NOT_EXECUTED = "NOT EXECUTED"
    STALE = "STALE"
    STALE_MISSING = "STALE (missing)"
    NO_COVERAGE = "NO COVERAGE"
    EXCLUDED = "EXCLUDED"


@dataclass(frozen=True, kw_only=True)
class LineAnswer:
    answer: Answer
    path: str
    line: int
    detail: str
    actionable: bool  # False: the reader must not act on it (stale, partial, unknown)
    function: str = ""
    test_files: tuple[str, ...] = ()

    def text(self) -> str:
        # one_line: the path, the detail (the artifact's dates), the function and the test files come from
        # coverage.json, another run's artifact, so none may start a line of stdout (``\n::error::``)
        head = f"{self.answer.value}  {one_line(self.path)}:{self.line}"
        lines = [head, f"  {one_line(self.detail)}"]
        if self.function:
            lines.append(f"  in function: {one_line(self.function)}")
        if self.test_files:
            lines.append(f"  executed by: {one_line(', '.join(self.test_files))}")
        if not self.actionable:
            lines.append(f"  {RECOLLECT}")
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "answer": self.answer.value,
            "file": self.path,
            "line": self.line,
            "detail": self.detail,
            "actionable": self.actionable,
            "function": self.function or None,
            "test_files": list(self.test_files),
            "recollect": "" if self.actionable else RECOLLECT,
        }


def _unmeasured(artifact: CoverageArtifact, path: str, digest: str | None, line: int) -> LineAnswer:
    def answer(kind: Answer, detail: str, actionable: bool) -> LineAnswer:
        return LineAnswer(answer=kind, path=path, line=line, detail=detail, actionable=actionable)

    if digest is None:
        return answer(Answer.NO_COVERAGE, "no such file, and none was measured under this name", False)
    if artifact.unmeasured is None:
        return answer(
            Answer.NO_COVERAGE,
            "never measured (the artifact has no file list, so whether the file changed since is unknown)",
            False,
        )
    known = artifact.unmeasured.get(path)
    if known is None:
        return answer(Answer.STALE, "the file is newer than the coverage: a test may execute it now", False)
    if known != digest:
        return answer(Answer.STALE, "never executed then, but the file changed since: a test may execute it now", False)
    if not artifact.completeness.complete:
        return answer(Answer.NO_COVERAGE, f"never executed in the shards folded; coverage is {artifact.label}", False)
    return answer(Answer.NO_COVERAGE, "never measured: no test executed this file", True)


def query_line(artifact: CoverageArtifact, path: str, line: int, *, digest: str | None, lines_now: int) -> LineAnswer:
    """What the artifact can truthfully say about ``path:line`` given the file's sha256 now (None: gone)."""
    f = artifact.file(path)
    if f is None:
        return _unmeasured(artifact, path, digest, line)

    def answer(kind: Answer, detail: str, actionable: bool, **more: Any) -> LineAnswer:
        return LineAnswer(answer=kind, path=path, line=line, detail=detail, actionable=actionable, **more)

    if digest is None:
        return answer(Answer.STALE_MISSING, f"the file is gone (renamed or deleted) since {artifact.created_at}", False)
    if digest != f.sha256:
        return answer(Answer.STALE, f"the file changed since it was measured ({artifact.created_at})", False)
    if line in f.excluded:
        return answer(Answer.EXCLUDED, f.excluded[line], True)
    function = f.function_at(line)
    if line in f.executed:
        return answer(
            Answer.EXECUTED,
            f"executed ({artifact.label})",
            True,
            function=function.name if function else "",
            test_files=tuple(f.tests_at(line)),
        )
    if line in f.missed:
        if artifact.completeness.complete:
            return answer(Answer.NOT_EXECUTED, "no test executed this line", True)
        return answer(
            Answer.NOT_EXECUTED,
            f"not executed in the shards folded, but coverage is {artifact.label}: a missing shard may execute it",
            False,
        )
    where = f"past the end of the file ({lines_now} lines)" if line > lines_now else "no statement on this line"
    return answer(Answer.NO_COVERAGE, where, True)


@dataclass(frozen=True, kw_only=True)
class Freshness:
    files: int
    changed: tuple[str, ...]  # gone ones included
    gone: tuple[str, ...]
    since: str

    @property
    def fresh(self) -> bool:
        return not self.changed

    def text(self) -> str:
        if self.fresh:
            return "FRESH\n"
        listed = "".join(f"  {'gone' if p in self.gone else 'changed'}: {one_line(p)}\n" for p in self.changed[:50])
        since = one_line(self.since)  # the artifact's, as the paths: never the start of a line
        return (
            f"STALE: {len(self.changed)} of {self.files} files changed since {since} ({len(self.gone)} gone)\n"
            f"{listed}  {RECOLLECT}\n"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "state": "FRESH" if self.fresh else "STALE",
            "files": self.files,
            "changed": list(self.changed),
            "gone": list(self.gone),
            "since": self.since,
            "recollect": "" if self.fresh else RECOLLECT,
        }


def recorded_digests(artifact: CoverageArtifact) -> dict[str, str]:
    """Every file the artifact vouches for: measured ones and tracked ones nobody executed."""
    return {**(artifact.unmeasured or {}), **{f.path: f.sha256 for f in artifact.files}}


def freshness(artifact: CoverageArtifact, now: Mapping[str, str | None]) -> Freshness:
    """``now``: each recorded file's sha256 today (None: gone)."""
    recorded = recorded_digests(artifact)
    changed = tuple(sorted(p for p, d in recorded.items() if now.get(p) != d))
    gone = tuple(p for p in changed if now.get(p) is None)
    return Freshness(files=len(recorded), changed=changed, gone=gone, since=artifact.created_at)
