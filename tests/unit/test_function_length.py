"""The 60-line rule (issue 21, /work/shared/notes/style.md): no function in ``src/ci_shards`` is longer than
60 lines, from its ``def`` line to its last line (docstring and comments included), unless it is listed
in ``LONG_FUNCTIONS`` below with the reason it stays long. A listed function that is no longer long
fails too, so the list only ever shrinks to what is true."""

from __future__ import annotations

import ast
from pathlib import Path

import ci_shards

MAX_LINES = 60
SOURCE = Path(ci_shards.__file__).resolve().parent

# "module path:function" (a method as "module path:Class.method") → why it may stay long
# (empty today: every function is at most 60 lines; an entry needs the reason the function must stay whole)
LONG_FUNCTIONS: dict[str, str] = {}


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method by its qualified name (nested functions count inside their parent)."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((prefix + node.name, node))
        elif isinstance(node, ast.ClassDef):
            found.extend(_functions(node, f"{prefix}{node.name}."))
    return found


def _lengths() -> dict[str, int]:
    lengths: dict[str, int] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        module = path.relative_to(SOURCE).as_posix()
        for name, node in _functions(ast.parse(path.read_text(encoding="utf-8"))):
            assert node.end_lineno is not None
            lengths[f"{module}:{name}"] = node.end_lineno - node.lineno + 1
    return lengths


def test_no_function_is_over_60_lines_unless_listed_with_a_reason():
    too_long = {name: n for name, n in _lengths().items() if n > MAX_LINES and name not in LONG_FUNCTIONS}
    assert too_long == {}, "split these, or list them in LONG_FUNCTIONS with the reason they stay long"


def test_every_listed_function_is_still_long():
    """A listed function that is gone or no longer long is a stale entry."""
    lengths = _lengths()
    stale = sorted(n for n in LONG_FUNCTIONS if lengths.get(n, 0) <= MAX_LINES)
    assert stale == [], "these are gone or no longer over 60 lines: remove them from LONG_FUNCTIONS"


def test_the_rule_sees_a_long_function():
    long_body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    tree = ast.parse(f"class K:\n    def m(self):\n        pass\n\ndef f():\n{long_body}\n")
    lengths = {name: node.end_lineno - node.lineno + 1 for name, node in _functions(tree) if node.end_lineno}
    assert lengths == {"K.m": 2, "f": MAX_LINES + 1}
