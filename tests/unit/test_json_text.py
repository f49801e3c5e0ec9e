"""common/json_text: the indented JSON ci-shards writes is json.dumps' own, byte for byte, for any value."""

from __future__ import annotations

import json
import math
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.common.json_text import indented, loads

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and the infinities included: json.dumps writes them as NaN, Infinity
    | st.text()  # unicode, control characters, quotes and backslashes
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=6)
        | st.lists(st.text(), max_size=6)  # the lists of strings that take the fast path
        | st.tuples(children, children)
        | st.dictionaries(st.text(), children, max_size=6)
    ),
    max_leaves=40,
)


def _reference(data: Any, indent: int) -> str:
    return json.dumps(data, sort_keys=True, indent=indent, ensure_ascii=False)


@settings(max_examples=200, deadline=None)
@given(data=JSON_VALUES, indent=st.sampled_from([1, 2, 4]))
def test_the_same_string_as_json_dumps(data: Any, indent: int) -> None:
    assert indented(data, indent) == _reference(data, indent)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(data=JSON_VALUES, indent=st.sampled_from([1, 2, 4]))
def test_the_same_string_as_json_dumps_thorough(data: Any, indent: int) -> None:
    test_the_same_string_as_json_dumps.hypothesis.inner_test(data, indent)


class Level(IntEnum):
    HIGH = 3


@pytest.mark.parametrize(
    "data",
    [
        {"shards": [{"items": ['a.py::t[é\t"x"]', "b.py"], "estimated_seconds": 1.5}], "total": 1},
        {"b": 1, "a": [[], {}, [[]]], "c": {"z": None}},
        {2: "int keys", 1: [True]},  # not str keys: json.dumps converts (and sorts) them itself
        {"level": Level.HIGH, "tiny": 5e-324, "big": 1e308, "neg": -0.0, "inf": math.inf},
        [math.nan, -math.inf],
        "just a string",
    ],
    ids=["plan-like", "empty-containers", "non-str-key", "int-subclass-and-floats", "non-finite", "scalar"],
)
def test_the_values_the_files_hold_and_the_odd_ones(data: Any) -> None:
    for indent in (1, 2):
        assert indented(data, indent) == _reference(data, indent)


def test_a_value_json_cannot_write_fails_as_json_dumps_fails() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        indented({"when": object()}, 2)


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("[" * 50_000 + "]" * 50_000, "nested too deeply to read", 50_000),
        ('{"a": "[[", "b": ' + "[" * 50_000 + "]" * 50_000 + "}", "nested too deeply to read", 50_017),
        ('{"a": ' + "9" * 5_000 + "}", "a number of more than 4300 digits", 7),
    ],
)
def test_loads_refuses_what_json_loads_cannot_read_with_a_decode_error(text: str, message: str, column: int) -> None:
    # found by tests/unit/test_cli_fuzz.py: json.loads raised RecursionError and a plain ValueError, which every
    # reader let through as an internal error (exit 3)
    with pytest.raises(json.JSONDecodeError) as caught:
        loads(text)
    assert (caught.value.msg, caught.value.lineno, caught.value.colno) == (message, 1, column)
    assert loads('{"a": [1]}', object_pairs_hook=list) == [("a", [1])]


def test_loads_refuses_a_lone_surrogate_and_keeps_a_pair() -> None:
    # found by tests/unit/test_cli_fuzz.py: "\ud800" in a plan or outcome failed later, writing or printing it
    with pytest.raises(json.JSONDecodeError) as caught:
        loads('{"items": ["x\\ud800"]}')
    assert (caught.value.msg, caught.value.colno) == ("\\ud800, half a UTF-16 pair that no UTF-8 text can hold", 14)
    with pytest.raises(json.JSONDecodeError):
        loads('{"\\uDC00": 1}')
    assert loads('["\\ud83d\\ude00", "\\\\ud800"]') == ["😀", "\\ud800"]
