"""Test files whose tests depend on one another (pytest-dependency), kept whole. Pure core, one reading edge.

pytest-dependency skips a test whose dependency did not pass earlier *in the same session*
(``@pytest.mark.dependency(depends=["test_a"])``, or ``depends(request, [...])`` in the test). A plan
that cuts such a file apart puts the dependent test in a session without its dependency: it was
skipped in its shard where plain pytest runs it ("2 passed, 2 skipped" for pytest's "4 passed", under
a green verdict). The mark's default scope is the module (``"class"`` is narrower), so keeping the file
whole (a keep-together rule, as ``first_weights`` keeps a file whose collection outweighs its tests)
keeps every such dependency in its shard, in pytest's order. Scopes ``"session"`` and ``"package"`` name
other files' tests: those files may still land apart, so the plan says so and names the flag that joins
them. The files are read as text with ``ast``; nothing is imported.

pytest-order's relative marks are the same kind of bond (``@pytest.mark.order(after="test_a")``): a shard keeps
the order of the tests it holds, so a cut put ``test_b`` in a shard where ``test_a`` never runs before it (every
plugin sees the shard's files collected whole, then the shard keeps its tests, so pytest-order does not even warn).
A name with a file (``"test_other.py::test_a"``) may name another file: it counts as scope ``"session"``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ci_shards.common.console import listed, plural

WITHIN_A_FILE = frozenset({"module", "class"})  # pytest-dependency's scopes that name tests of the same file


def _called_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _scope(call: ast.Call) -> str:
    """A call's ``scope=`` as a literal string; pytest-dependency's default, the module, otherwise (a
    scope it cannot read is taken as the widest)."""
    for keyword in call.keywords:
        if keyword.arg == "scope":
            value = keyword.value
            return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else "session"
    return "module"


def _order_scope(call: ast.Call) -> str:
    """The scope of pytest-order's relative mark (``order(before=..., after=...)``): "module" for test names,
    "session" for a name with a file or one that is no literal, "" for no relative mark (an ordinal alone)."""
    names: list[ast.expr] = []
    for keyword in call.keywords:
        if keyword.arg in ("before", "after"):
            value = keyword.value
            names.extend(value.elts if isinstance(value, ast.List | ast.Tuple) else [value])
    if not names:
        return ""
    literal = [n.value for n in names if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return "session" if len(literal) < len(names) or any(".py::" in n for n in literal) else "module"


def dependency_scopes(source: bytes) -> frozenset[str]:
    """The scopes of the dependencies the tests of ``source`` declare: the ``dependency`` mark with
    ``depends=``, a ``depends(request, ...)`` call, or pytest-order's ``order`` mark with ``before=`` or
    ``after=``; empty when none does or the file does not parse."""
    if b"depends" not in source and b"before" not in source and b"after" not in source:  # most files: no parse
        return frozenset()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return frozenset()
    scopes: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _called_name(node.func)
        if name == "depends" or (name == "dependency" and any(k.arg == "depends" for k in node.keywords)):
            scopes.add(_scope(node))
        elif name == "order" and _order_scope(node):
            scopes.add(_order_scope(node))
    return frozenset(scopes)


@dataclass(frozen=True)
class DependentFiles:
    whole: tuple[str, ...]  # files kept in one shard
    across: tuple[str, ...]  # of those, the files whose tests depend on other files' tests

    def notes(self) -> list[str]:
        notes = []
        if self.whole:
            notes.append(
                f"{plural(len(self.whole), 'file')} whose tests depend on one another (pytest-dependency,"
                " pytest-order's before/after) kept"
                f" whole, so each dependency runs in its shard: {listed(self.whole, 3)}"
            )
        if self.across:
            notes.append(
                f"tests in {listed(self.across, 3)} depend on other files' tests (pytest-dependency's scope"
                " 'session' or 'package', pytest-order's before/after naming a file): in another shard a"
                " dependency does not run first (pytest-dependency skips them, and the verdict fails naming"
                " them); join those files with --keep-together PATTERN"
            )
        return notes


def dependent_files(files: Sequence[str], read: Callable[[str], bytes | None]) -> DependentFiles:
    """Which of ``files`` declare dependencies; ``read(file)`` gives a file's text (None: not readable)."""
    whole: list[str] = []
    across: list[str] = []
    for file in sorted(set(files)):
        source = read(file) if file.endswith(".py") else None
        scopes = dependency_scopes(source) if source is not None else frozenset()
        if scopes:
            whole.append(file)
        if scopes - WITHIN_A_FILE:
            across.append(file)
    return DependentFiles(tuple(whole), tuple(across))
