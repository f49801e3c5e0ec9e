"""Narrowing by executed code: which functions a change is confined to, and which tests executed them. Pure.

A change whose every hunk lies inside the *body* of a function (of the base version) changes nothing
that runs at import time: not the ``def`` line, its decorators, default arguments or annotations, not
the docstring (``f.__doc__`` is set at import), not module or class bodies. Such a change can only be
observed by running that body, so a test file that never executed it on the base (with the rest of the
code identical) cannot observe it. ``changed_functions`` answers the functions, or why it cannot say
(then the selection falls back to its file-level maps).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
CACHING = ("cache", "memo")  # decorators whose wrapped body runs once for every later caller


@dataclass(frozen=True)
class Hunk:
    """One hunk of ``git diff -U0`` on the base side: ``count`` lines from ``start`` (0: a pure insertion
    after line ``start``)."""

    start: int
    count: int


@dataclass(frozen=True)
class FunctionBody:
    """The lines of a function's body that run only when it is called (docstring and header excluded)."""

    qualname: str  # Class.method, outer.inner
    first: int  # first line of the body proper
    last: int  # last line of the function
    cached: bool = False  # a caching decorator: its body runs once for every later caller

    def holds(self, hunk: Hunk) -> bool:
        if hunk.count == 0:  # an insertion between hunk.start and hunk.start + 1: both sides in the body
            return self.first - 1 <= hunk.start and hunk.start + 1 <= self.last
        return self.first <= hunk.start and hunk.start + hunk.count - 1 <= self.last

    @property
    def lines(self) -> range:
        return range(self.first, self.last + 1)


@dataclass(frozen=True)
class Confined:
    """Every hunk lies in a function body: the innermost ones that hold them."""

    functions: tuple[FunctionBody, ...]


@dataclass(frozen=True)
class NotConfined:
    """Why the change cannot be narrowed (the file falls back to the file-level maps)."""

    reason: str


@dataclass(frozen=True)
class Narrowing:
    """What the coverage map says about a confined change to one file."""

    functions: str  # the changed functions, as `module.qualname` names
    tests: frozenset[str]  # test files whose context executed one of them on the base
    measured: frozenset[str]  # every test file with a context in the map


def module_name(path: str) -> str:
    """``src/pkg/mod.py`` → ``pkg.mod`` (a name for people, not for importing)."""
    return path.removeprefix("src/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def parse_hunks(diff: str) -> tuple[Hunk, ...]:
    """The base-side hunks of ``git diff -U0`` output for one file."""
    hunks = []
    for line in diff.splitlines():
        found = _HUNK.match(line)
        if found:
            hunks.append(Hunk(int(found.group(1)), 1 if found.group(2) is None else int(found.group(2))))
    return tuple(hunks)


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _caches(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    names = (ast.unparse(d).lower() for d in func.decorator_list)
    return any(word in name for name in names for word in CACHING)


def _body(func: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, lines: Sequence[str]) -> FunctionBody | None:
    """None when nothing in the body runs only at call time (a docstring alone, a one-line def)."""
    body = func.body[1:] if _is_docstring(func.body[0]) else func.body
    if not body or func.end_lineno is None:
        return None
    first = body[0]
    first_line = first.lineno
    if first is func.body[0]:
        text = lines[first_line - 1].encode("utf-8")[: first.col_offset] if first_line <= len(lines) else b""
        if text.strip():  # the body starts on a header line (`def f(): return 1`): that line is the header's
            first_line += 1
    else:  # after the docstring: not on its last line
        docstring_end = func.body[0].end_lineno or func.body[0].lineno
        first_line = max(first_line, docstring_end + 1)
    if first_line > func.end_lineno:
        return None
    return FunctionBody(qualname=qualname, first=first_line, last=func.end_lineno, cached=_caches(func))


def function_bodies(source: str) -> tuple[FunctionBody, ...]:
    """Every function's body in ``source`` (nested ones and methods too), outermost first. Raises SyntaxError /
    ValueError when ``source`` does not parse."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found: list[FunctionBody] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                body = _body(child, name, lines)
                if body is not None:
                    found.append(body)
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return tuple(found)


def changed_functions(source: str, hunks: Iterable[Hunk]) -> Confined | NotConfined:
    """The innermost function bodies holding each hunk of a change to ``source`` (the base version), or why
    the change is not confined to function bodies."""
    hunks = tuple(hunks)
    if not hunks:
        return NotConfined("no hunk in the diff")
    try:
        bodies = function_bodies(source)
    except (SyntaxError, ValueError) as err:
        return NotConfined(f"the base version does not parse ({err.__class__.__name__})")
    chosen: dict[str, FunctionBody] = {}
    for hunk in hunks:
        holding = [b for b in bodies if b.holds(hunk)]
        if not holding:
            where = f"after line {hunk.start}" if hunk.count == 0 else f"at line {hunk.start}"
            return NotConfined(f"a change {where} is outside any function body")
        innermost = min(holding, key=lambda b: b.last - b.first)
        if innermost.cached:  # who executed a cached body is not who depends on its result
            return NotConfined(f"`{innermost.qualname}` is cached (its body runs once for every later caller)")
        chosen[innermost.qualname] = innermost
    return Confined(tuple(chosen[name] for name in sorted(chosen)))


def files_that_ran(functions: Iterable[FunctionBody], lines_by_test: Mapping[str, Iterable[int]]) -> frozenset[str]:
    """The test files whose context executed at least one line of one of ``functions``."""
    wanted = {line for f in functions for line in f.lines}
    return frozenset(t for t, lines in lines_by_test.items() if wanted.intersection(lines))
