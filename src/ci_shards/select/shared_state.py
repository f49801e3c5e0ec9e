"""Test files whose tests may hand each other state through the test module itself. Pure (``ast``, nothing runs).

A per-test coverage map attributes a line to the test that executed it. A test that reads what an earlier
test of its file computed and kept (``global RESULT; RESULT = parse(...)``, ``SEEN.append(...)`` into a
module-level list, ``CACHE[key] = ...``) depends on code it never executed: such a file is narrowed as a
whole (any of its tests ran the changed body → all of them run), as with a per-file map. The check reads
the test file's own functions and methods: a ``global`` or ``nonlocal`` statement, or a store into, or a
mutating method call on, a name the module binds at its top level. What the project's source modules keep
between tests is not seen here (docs/selection.md, "Limits").
"""

from __future__ import annotations

import ast

_MUTATING = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "pop", "remove", "clear"})


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        names.update(t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name))
    return names


def _root(node: ast.expr) -> str | None:
    """``A`` of ``A.b[c].d``: the name a chain of attributes and subscripts starts from."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _writes(node: ast.AST, module: set[str]) -> bool:
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return True
    targets: list[ast.expr] = []
    if isinstance(node, (ast.Assign, ast.Delete)):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATING:
        targets = [node.func]
    return any(isinstance(t, (ast.Attribute, ast.Subscript)) and _root(t) in module for t in targets)


def shares_state(source: str) -> bool:
    """Whether a test file's functions keep state in the module for later tests (True when it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return True
    module = _module_names(tree)
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return any(_writes(node, module) for f in functions for node in ast.walk(f))
