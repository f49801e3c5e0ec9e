"""Narrowing by executed code: which functions a change is confined to, and which tests executed them. Pure.

A change whose every hunk lies inside the *body* of a function (of the base version) changes nothing
that runs at import time: not the ``def`` line, its decorators, default arguments or annotations, not
the docstring (``f.__doc__`` is set at import), not module or class bodies. Such a change can only be
observed by running that body, so a test file that never executed it on the base (with the rest of the
code identical) cannot observe it. A hunk may replace or delete body lines, or insert lines anywhere from
after the header's last line (the ``:`` line, or the docstring's last line) to before the body's last line.
``confine`` checks the new version too: it compiles, and with the changed bodies hollowed out it is the
same module as the base (so "the rest of the code identical" holds, whatever the diff's line ranges
suggest). ``changed_functions`` and ``confine`` answer the functions, or why they cannot say (then the
selection falls back to its file-level maps).
"""

from __future__ import annotations

import ast
import io
import re
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ci_shards.select.recorded import RecordedTests

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
CACHING = ("cache", "memo")  # decorators whose wrapped body runs once for every later caller
# lines too common to say that code moved (a `return` removed here and another added there is no move)
_COMMON_LINES = frozenset({"pass", "...", "return", "return None", "break", "continue", "else:", "try:", "finally:"})


@dataclass(frozen=True)
class Hunk:
    """One hunk of ``git diff -U0``: ``count`` base lines from ``start`` (0: a pure insertion after line
    ``start``) become ``new_count`` lines from ``new_start``; ``removed`` and ``added`` are their texts."""

    start: int
    count: int
    new_start: int = 0
    new_count: int = 0
    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class FunctionBody:
    """The lines of a function's body that run only when it is called (docstring and header excluded)."""

    qualname: str  # Class.method, outer.inner
    line: int  # the `def` line
    header: int  # the header's last line: the `:` line, or the docstring's last line
    first: int  # first line of the body proper
    last: int  # last line of the function
    cached: bool = False  # a caching decorator: its body runs once for every later caller

    def holds(self, hunk: Hunk) -> bool:
        """A replacement or deletion of lines after the header; an insertion after the header's last line (or
        later) and before the body's last line: its new lines can only be part of this body."""
        if hunk.count == 0:  # an insertion between hunk.start and hunk.start + 1
            return self.header <= hunk.start < self.last
        return self.header < hunk.start and hunk.start + hunk.count - 1 <= self.last

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
    # a map recorded per test (``tests`` in coverage.json): the contexts that executed one of them, test ids
    # or test files (a file's own context: module- and class-scoped fixtures); None: recorded per test file
    ran: RecordedTests | None = None
    measured_ids: RecordedTests | None = None  # every context of the map


def module_name(path: str) -> str:
    """``src/pkg/mod.py`` → ``pkg.mod`` (a name for people, not for importing)."""
    return path.removeprefix("src/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def parse_hunks(diff: str) -> tuple[Hunk, ...]:
    """The hunks of ``git diff -U0`` output for one file, with the lines each removes and adds."""
    headers: list[Hunk] = []
    texts: list[tuple[list[str], list[str]]] = []  # per hunk: removed, added
    for line in diff.splitlines():
        header = _HUNK.match(line)
        if header:
            start, count, new_start, new_count = (1 if n is None else int(n) for n in header.groups())
            headers.append(Hunk(start, count, new_start, new_count))
            texts.append(([], []))
        elif texts and line.startswith(("-", "+")):
            texts[-1][0 if line.startswith("-") else 1].append(line[1:])
    return tuple(
        Hunk(h.start, h.count, h.new_start, h.new_count, tuple(removed), tuple(added))
        for h, (removed, added) in zip(headers, texts, strict=True)
    )


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _caches(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    names = (ast.unparse(d).lower() for d in func.decorator_list)
    return any(word in name for name in names for word in CACHING)


def _is_code(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith("#")


def _body(func: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, lines: Sequence[str]) -> FunctionBody | None:
    """None when nothing in the body runs only at call time (a docstring alone, a one-line def)."""
    docstring = func.body[0] if _is_docstring(func.body[0]) else None
    body = func.body[1:] if docstring else func.body
    if not body or func.end_lineno is None:
        return None
    first = body[0]
    first_line = first.lineno
    if docstring is None:
        text = lines[first_line - 1].encode("utf-8")[: first.col_offset] if first_line <= len(lines) else b""
        if text.strip():  # the body starts on a header line (`def f(): return 1`): that line is the header's
            first_line += 1
        # the `:` line: the last one before the first statement that is not blank or a comment (nothing else
        # sits between them; a comment inside the signature comes before its `):` line)
        header = next((n for n in range(first.lineno - 1, func.lineno, -1) if _is_code(lines[n - 1])), func.lineno)
    else:  # after the docstring: not on its last line
        header = docstring.end_lineno or docstring.lineno
        first_line = max(first_line, header + 1)
    if first_line > func.end_lineno:
        return None
    return FunctionBody(
        qualname=qualname, line=func.lineno, header=header, first=first_line, last=func.end_lineno, cached=_caches(func)
    )


def _source_lines(source: str) -> list[str]:
    """Lines as the parser counts them (``\\n``, ``\\r\\n``, ``\\r``; not ``str.splitlines``' form feeds)."""
    return io.StringIO(source, newline=None).read().split("\n")


def _parse(source: str) -> ast.Module:
    """``ast.parse`` with its warnings silenced (an invalid escape would raise under ``-W error``; whether the
    new version adds one is ``confine``'s question)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source)


def function_bodies(source: str) -> tuple[FunctionBody, ...]:
    """Every function's body in ``source`` (nested ones and methods too), outermost first. Raises SyntaxError /
    ValueError when ``source`` does not parse."""
    tree = _parse(source)
    lines = _source_lines(source)
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


def _placed(source: str, hunks: Sequence[Hunk]) -> list[tuple[Hunk, FunctionBody]] | NotConfined:
    """Each hunk with the innermost function body holding it, or why one has none."""
    if not hunks:
        return NotConfined("no hunk in the diff")
    try:
        bodies = function_bodies(source)
    except (SyntaxError, ValueError) as err:
        return NotConfined(f"the base version does not parse ({err.__class__.__name__})")
    placed = []
    for hunk in hunks:
        holding = [b for b in bodies if b.holds(hunk)]
        if not holding:
            where = f"after line {hunk.start}" if hunk.count == 0 else f"at line {hunk.start}"
            return NotConfined(f"a change {where} is outside any function body")
        innermost = min(holding, key=lambda b: b.last - b.first)
        if innermost.cached:  # who executed a cached body is not who depends on its result
            return NotConfined(f"`{innermost.qualname}` is cached (its body runs once for every later caller)")
        placed.append((hunk, innermost))
    return placed


def changed_functions(source: str, hunks: Iterable[Hunk]) -> Confined | NotConfined:
    """The innermost function bodies holding each hunk of a change to ``source`` (the base version), or why
    the change is not confined to function bodies. The base side only: ``confine`` checks the new version."""
    placed = _placed(source, tuple(hunks))
    if isinstance(placed, NotConfined):
        return placed
    chosen = {body.qualname: body for _, body in placed}
    return Confined(tuple(chosen[name] for name in sorted(chosen)))


def confine(base: str, head: str, diff: str) -> Confined | NotConfined:
    """``changed_functions`` for the change from ``base`` to ``head`` (``diff``: its ``git diff -U0``), checked
    against the new version: it compiles with no warning the base does not have, no line moves from one
    function to another, and outside the changed bodies it is the same module as the base."""
    hunks = parse_hunks(diff)
    placed = _placed(base, hunks)
    if isinstance(placed, NotConfined):
        return placed
    head_warnings = _compile_warnings(head)
    if head_warnings is None:
        return NotConfined("the new version does not compile")
    new_warnings = head_warnings - (_compile_warnings(base) or Counter())
    if new_warnings:
        return NotConfined(f"the new version compiles with a new warning ({min(new_warnings)})")
    moved = _moved(placed)
    if moved is not None:
        return NotConfined(moved)
    chosen = {body.qualname: body for _, body in placed}
    bodies = tuple(chosen[name] for name in sorted(chosen))
    hollow_base = {b.line for b in bodies}
    hollow_head = {_shifted(b.line, hunks) for b in bodies}
    if _outline(base, hollow_base) != _outline(head, hollow_head):
        return NotConfined("outside the changed function bodies the new version is not the base's module")
    return Confined(bodies)


def _compile_warnings(source: str) -> Counter[str] | None:
    """The warnings compiling ``source`` gives (a SyntaxWarning such as an invalid escape: under ``-W error``
    an import fails), or None when it does not compile."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            compile(source, "<changed file>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return None
    return Counter(f"{w.category.__name__}: {w.message}" for w in caught)


def _moved(placed: Sequence[tuple[Hunk, FunctionBody]]) -> str | None:
    """Why the change moves code between functions (a line one removes and another adds), or None."""
    removed: dict[str, str] = {}
    for hunk, body in placed:
        for text in hunk.removed:
            if _is_code(text) and text.strip() not in _COMMON_LINES:
                removed.setdefault(text.strip(), body.qualname)
    for hunk, body in placed:
        for text in hunk.added:
            source = removed.get(text.strip())
            if source is not None and source != body.qualname:
                return f"a line moves from `{source}` to `{body.qualname}` (a move between functions is not narrowed)"
    return None


def _shifted(line: int, hunks: Iterable[Hunk]) -> int:
    """Where an unchanged base line is in the new version: moved by every hunk above it."""
    return line + sum(h.new_count - h.count for h in hunks if h.start + max(h.count, 1) - 1 < line)


def _yields(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``func`` is a generator: a ``yield`` in its own scope (what a call does before running the body)."""
    pending: list[ast.AST] = list(func.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            pending.extend(d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)
            pending.extend(node.decorator_list if not isinstance(node, ast.Lambda) else ())
        elif isinstance(node, ast.ClassDef):
            pending.extend((*node.bases, *node.keywords, *node.decorator_list))
        else:
            pending.extend(ast.iter_child_nodes(node))
    return False


class _Hollow(ast.NodeTransformer):
    """Replaces the body of each function whose ``def`` is on one of ``lines`` with its docstring (if any) and
    what kind of function it is, so two versions compare equal when they differ only inside those bodies."""

    def __init__(self, lines: set[int]) -> None:
        self.lines = lines

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._hollow(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._hollow(node)

    def _hollow(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        if node.lineno not in self.lines:
            return self.generic_visit(node)
        docstring = node.body[:1] if _is_docstring(node.body[0]) else []
        kind = ast.Expr(ast.Constant("generator" if _yields(node) else "function"))
        node.body = [*docstring, kind]
        return node


def _outline(source: str, hollow: set[int]) -> str:
    """``source``'s syntax tree (no positions) with the bodies of the functions defined on ``hollow`` lines
    left out."""
    return ast.dump(_Hollow(hollow).visit(_parse(source)))


def files_that_ran(functions: Iterable[FunctionBody], lines_by_test: Mapping[str, Iterable[int]]) -> frozenset[str]:
    """The test files whose context executed at least one line of one of ``functions``."""
    wanted = {line for f in functions for line in f.lines}
    return frozenset(t for t, lines in lines_by_test.items() if wanted.intersection(lines))
