"""Conditions on the interpreter read from the text and decided by this one, which the shards run on. Pure.

A conftest.py leaves files out of collection on some Pythons only (cattrs 26.2.1: ``if sys.version_info < (3, 12):
collect_ignore_glob.append("*_695.py")``; attrs 26.1.0 the same below 3.14). The plan runs on the shards'
interpreter (``run --pytest``, ``local``: ``plan/importable.py`` reads its ``sys.path`` for the same reason), so
such a condition is decided here as Python would decide it there: ``sys.version_info`` (whole, indexed or sliced)
compared with integers or a tuple of them, ``sys.platform`` and ``sys.implementation.name`` compared with a
string or ``.startswith(...)``, ``platform.python_implementation()`` and ``platform.system()`` compared with a
string, joined by ``and``, ``or`` and ``not`` (short-circuited as Python does). Anything else is not decided
(None); so is a name the module does not bind by ``import sys`` or ``import platform``.
"""

from __future__ import annotations

import ast
import platform
import sys
from typing import Any, Final

from ci_shards.plan.static_values import COMPARISONS

# what each known expression's text is worth on this interpreter
_FACTS: Final[dict[str, Any]] = {
    "sys.version_info": tuple(sys.version_info),
    "sys.platform": sys.platform,
    "sys.implementation.name": sys.implementation.name,
    "platform.python_implementation()": platform.python_implementation(),
    "platform.system()": platform.system(),
}


class _Unknown(Exception):
    pass


def interpreter_fact(test: ast.expr, modules: set[str]) -> bool | None:
    """Whether ``test`` holds on this interpreter, or None when the text does not decide it; ``modules``: the names
    the module binds by ``import NAME`` (``sys``, ``platform``)."""
    try:
        return bool(_value(test, modules))
    except (_Unknown, TypeError, IndexError, ValueError):
        return None


def _value(node: ast.expr, modules: set[str]) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | str):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_value(e, modules) for e in node.elts)
    if isinstance(node, ast.BoolOp):
        return _bool_op(node, modules)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _value(node.operand, modules)
    if isinstance(node, ast.Compare):
        return _compare(node, modules)
    if isinstance(node, ast.Subscript):
        return _subscript(node, modules)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "startswith":
        prefix = [_value(a, modules) for a in node.args]
        subject = _value(node.func.value, modules)
        if len(prefix) != 1 or not isinstance(subject, str) or not isinstance(prefix[0], str) or node.keywords:
            raise _Unknown
        return subject.startswith(prefix[0])
    text = ast.unparse(node)
    if text in _FACTS and text.split(".")[0] in modules:
        return _FACTS[text]
    raise _Unknown


def _bool_op(node: ast.BoolOp, modules: set[str]) -> Any:
    want = isinstance(node.op, ast.Or)  # ``or`` stops at the first true operand, ``and`` at the first false
    value: Any = None
    for operand in node.values:
        value = _value(operand, modules)
        if bool(value) is want:
            return value
    return value


def _compare(node: ast.Compare, modules: set[str]) -> bool:
    left = _value(node.left, modules)
    for op, comparator in zip(node.ops, node.comparators, strict=True):
        compare = COMPARISONS.get(type(op))
        right = _value(comparator, modules)
        if compare is None or type(left) is not type(right):  # ``is``; a str against a tuple (``in`` one too)
            raise _Unknown
        if not compare(left, right):
            return False
        left = right
    return True


def _subscript(node: ast.Subscript, modules: set[str]) -> Any:
    value = _value(node.value, modules)
    if not isinstance(value, tuple):
        raise _Unknown
    if isinstance(node.slice, ast.Slice):
        bounds = [_value(b, modules) if b is not None else None for b in (node.slice.lower, node.slice.upper)]
        if node.slice.step is not None or not all(b is None or isinstance(b, int) for b in bounds):
            raise _Unknown
        return value[bounds[0] : bounds[1]]
    index = _value(node.slice, modules)
    if not isinstance(index, int):
        raise _Unknown
    return value[index]
