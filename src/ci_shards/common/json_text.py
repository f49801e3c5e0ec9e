"""The indented JSON that ci-shards writes for the next stage (plan.json, outcome.json, the timings store,
coverage.json), byte for byte what ``json.dumps(data, sort_keys=True, indent=N, ensure_ascii=False)`` writes,
only faster; and ``loads``, the reading whose every refusal is a ``json.JSONDecodeError``. Pure.

The standard library uses its C encoder only without ``indent``; with it every value goes through the pure
Python ``_iterencode``. A plan of 100,000 items spent a tenth of its whole ``ci-shards plan`` process there
(docs/benchmarks.md, the 100,000-item plan path). Here a list of strings, the bulk of these files (a shard's
items), is one ``join`` over the C string encoder; anything this module does not know (a key that is not a
string, a value of another type) is left to ``json.dumps`` itself, so the bytes never differ.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring  # the C function when _json is there, as json.dumps uses
from typing import Any


class _Unsupported(Exception):
    """A value only ``json.dumps`` knows how to write (or to refuse)."""


def indented(data: Any, indent: int) -> str:
    """``json.dumps(data, sort_keys=True, indent=indent, ensure_ascii=False)``, the same string."""
    try:
        return _value(data, "\n", " " * indent)
    except _Unsupported:
        return json.dumps(data, sort_keys=True, indent=indent, ensure_ascii=False)


def _value(value: Any, newline: str, step: str) -> str:
    """``value`` written at the nesting that ``newline`` (a line break and the current indent) stands for."""
    kind = type(value)
    if kind is str:
        return str(encode_basestring(value))
    if kind is dict:
        return _object(value, newline, step)
    if kind is list or kind is tuple:
        return _array(value, newline, step)
    return _scalar(value)


def _object(value: Mapping[Any, Any], newline: str, step: str) -> str:
    if not value:
        return "{}"
    inner = newline + step
    if any(type(key) is not str for key in value):
        raise _Unsupported  # json converts such keys, and sorts them first: its rules, not copied here
    parts = [f"{encode_basestring(key)}: {_value(item, inner, step)}" for key, item in sorted(value.items())]
    return "{" + inner + ("," + inner).join(parts) + newline + "}"


def _array(value: Sequence[Any], newline: str, step: str) -> str:
    if not value:
        return "[]"
    inner = newline + step
    write: Callable[[Any], str] = (
        encode_basestring if all(type(item) is str for item in value) else lambda item: _value(item, inner, step)
    )
    return "[" + inner + ("," + inner).join(map(write, value)) + newline + "]"


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    raise _Unsupported


def loads(text: str, **kwargs: Any) -> Any:
    """``json.loads(text, **kwargs)``, refusing every document it cannot read with a ``json.JSONDecodeError``, the one
    error each reader turns into a line naming its file. ``json.loads`` also raises a ``RecursionError`` on arrays
    nested deeper than the interpreter's stack allows (``[[[[...``) and a plain ``ValueError`` on an integer
    of more digits than Python converts (``sys.get_int_max_str_digits()``, 4300), and decodes ``"\\ud800"`` to a
    string no UTF-8 file or stream can hold: each was an internal error later on."""
    try:
        data = json.loads(text, **kwargs)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        msg, at = "nested too deeply to read", _deepest(text)
    except ValueError:
        limit = getattr(sys, "get_int_max_str_digits", lambda: 4300)()  # Python 3.10.7 and later
        found = re.search(rf"\d{{{limit + 1},}}", text)
        msg, at = f"a number of more than {limit} digits", found.start() if found else 0
    else:
        lone = _lone_surrogate(data) if _SURROGATE_ESCAPE.search(text) else None
        if lone is None:
            return data
        escape = f"\\u{ord(lone):04x}"
        msg, at = f"{escape}, half a UTF-16 pair that no UTF-8 text can hold", text.lower().find(escape)
    raise json.JSONDecodeError(msg, text, max(at, 0))


# ``\ud800``-``\udfff`` in a JSON string: a lone one decodes to a str that cannot be written (or printed) as UTF-8
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate(data: Any) -> str | None:
    """The first lone surrogate among ``data``'s strings and keys (a walk with a stack: the nesting may be deep)."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack += [*value.keys(), *value.values()]
        elif isinstance(value, (list, tuple)):
            stack += value
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as err:
                return value[err.start]
    return None


_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _deepest(text: str) -> int:
    """Where ``text`` is nested deepest (strings skipped): the place a reader's error points at."""
    depth = deepest = at = 0
    for token in _BRACKETS.finditer(text):
        depth += {"[": 1, "{": 1, "]": -1, "}": -1}.get(token.group(), 0)
        if depth > deepest:
            deepest, at = depth, token.start()
    return at
