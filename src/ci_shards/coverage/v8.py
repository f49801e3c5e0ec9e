"""V8 coverage (``NODE_V8_COVERAGE`` dumps) as lines and functions: pure, one script's source and ranges in.

V8 reports, per function, nested ``[startOffset, endOffset)`` ranges of the source with an execution
count (block coverage: inner blocks after outer ones). The rule, as v8-to-istanbul (c8) applies it:
ranges from the outermost to the innermost, each setting the count of every line it fully contains
(from the line's start, indentation included, to its end), so a never-run inner block marks its
lines 0 while the lines around it keep the function's count (a method's range starts at its name,
after the indentation: its first line keeps the class' count, as Node's own coverage counts it).
Countable lines are the non-blank lines that are not only a comment. Offsets are string indexes
(UTF-16 units in V8; the same for any source without characters outside the Basic Multilingual Plane).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ci_shards.coverage.artifact import Function

_COMMENT_STARTS = ("//", "/*", "*", "*/")


@dataclass(frozen=True, kw_only=True)
class ScriptLines:
    counts: Mapping[int, int]  # countable line -> executions (0: never)
    functions: tuple[tuple[Function, bool], ...]  # (function, ran at least once)


def _line_spans(source: str) -> list[tuple[int, int, int]]:
    """(line number, start offset, end offset) of each countable line."""
    spans = []
    offset = 0
    for number, text in enumerate(source.split("\n"), 1):
        stripped = text.strip()
        if stripped and not stripped.startswith(_COMMENT_STARTS):
            spans.append((number, offset, offset + len(text.rstrip("\r"))))
        offset += len(text) + 1
    return spans


def _line_of(source: str, offset: int) -> int:
    return source.count("\n", 0, max(0, offset)) + 1


def script_lines(source: str, functions: Sequence[Mapping[str, Any]]) -> ScriptLines:
    spans = _line_spans(source)
    ranges = sorted(
        ((int(r["startOffset"]), int(r["endOffset"]), int(r["count"])) for f in functions for r in f["ranges"]),
        key=lambda r: (-(r[1] - r[0]), r[0]),
    )
    counts: dict[int, int] = {}
    for start, end, count in ranges:
        for number, first, last in spans:
            if start <= first and last <= end:
                counts[number] = count
    found = []
    for f in functions:
        first_range = f["ranges"][0]
        start, end = int(first_range["startOffset"]), int(first_range["endOffset"])
        if start == 0 and end >= len(source.rstrip()) and not f.get("functionName"):
            continue  # the module itself, not a function
        function = Function(
            name=str(f.get("functionName") or "(anonymous)"), start=_line_of(source, start), end=_line_of(source, end)
        )
        found.append((function, int(first_range["count"]) > 0))
    return ScriptLines(counts=counts, functions=tuple(found))


def countable(source: str) -> list[int]:
    return [number for number, _first, _last in _line_spans(source)]
