"""The per-test map's compact form (coverage/context_map.py, issue 24): the round trip over generated and
adversarial maps, what a damaged one says, and that the selection's question has the per-context answer."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_shards.coverage.context_map import (
    LINE_LIMIT,
    decode,
    encode,
    front_coded,
    group,
    parse_ranges,
    ranges_text,
    read_table,
    table,
)

# node ids as pytest spells them and worse: `::` inside brackets, unicode, spaces, commas and dashes (the
# separators of the ranges text, which never holds a name)
ODD_IDS = [
    "tests/test_a.py::test_x",
    "tests/test_a.py::TestC::test_p[a::b]",
    "tests/test_a.py::test_p[1-2,3]",
    "tests/t\u00e9st_\u00fc.py::test_\u96ea[\u2603]",
    "tests/test_a.py::test_p[ ]",
    "tests/test_a.py",  # a file's own context (module- and class-scoped setup)
    "tests/test_a.py::test_p[[nested]]",
]
names = st.one_of(st.sampled_from(ODD_IDS), st.text(min_size=1, max_size=30))
lines = st.frozensets(st.one_of(st.integers(1, 60), st.integers(1, LINE_LIMIT - 1)), max_size=30)
maps = st.dictionaries(names, lines, max_size=40)


def round_trip(by_context: dict[str, frozenset[int]]) -> dict[str, tuple[int, ...]]:
    """Encoded as coverage.json holds it (through JSON text), decoded again."""
    names_ = table(by_context)
    text = json.dumps({"contexts": front_coded(names_), "context_lines": encode(group(by_context, names_))})
    data = json.loads(text)
    return decode(data["context_lines"], read_table(data["contexts"])).expand()


@given(maps)
def test_every_context_gets_back_exactly_its_lines(by_context: dict[str, frozenset[int]]) -> None:
    expected = {name: tuple(sorted(ls)) for name, ls in by_context.items() if ls}
    assert round_trip(by_context) == expected


@given(maps, st.frozensets(st.integers(1, 70), max_size=20))
def test_the_contexts_that_ran_a_body_are_those_whose_lines_meet_it(
    by_context: dict[str, frozenset[int]], body: frozenset[int]
) -> None:
    names_ = table(by_context)
    groups = decode(json.loads(json.dumps(encode(group(by_context, names_)))), names_)
    assert groups.ran(body) == {name for name, ls in by_context.items() if ls & body}
    assert set(groups) == {name for name, ls in by_context.items() if ls}


@given(st.frozensets(st.integers(0, 10**6), max_size=200))
def test_ranges_text_reads_back(numbers: frozenset[int]) -> None:
    assert parse_ranges(ranges_text(numbers)) == tuple(sorted(numbers))


def test_equal_line_sets_are_kept_once_and_runs_of_contexts_as_ranges() -> None:
    """The size follows the distinct line sets: 10,000 parametrized cases running the same lines are one
    group, and their contexts one range."""
    by_context = {f"t.py::test_p[{i:05}]": frozenset(range(10, 60)) for i in range(10_000)}
    by_context["t.py::test_other"] = frozenset({3})
    names_ = table(by_context)
    assert encode(group(by_context, names_)) == [["3", "0"], ["10-59", "1-10000"]]  # test_other sorts first


@pytest.mark.parametrize(
    ("by_context", "expected"),
    [
        ({}, []),  # an empty file
        ({"t.py::a": frozenset()}, []),  # a context that ran no line of it
        ({"t.py::a": frozenset(range(1, 5001))}, [["1-5000", "0"]]),  # a test in every line
        ({"t.py::a": frozenset({LINE_LIMIT - 1})}, [[str(LINE_LIMIT - 1), "0"]]),  # a huge line number
    ],
)
def test_edge_maps(by_context: dict[str, frozenset[int]], expected: list[list[str]]) -> None:
    assert encode(group(by_context, table(by_context))) == expected
    assert round_trip(by_context) == {n: tuple(sorted(ls)) for n, ls in by_context.items() if ls}


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("not a list", "context_lines is not a list"),
        ([["1-3"]], "is not [lines, contexts]"),
        ([["1-3", "5"]], "not in the table of 2 contexts"),  # an index past the table
        ([["3-1", "0"]], "out of order"),  # a reversed range
        ([["5,2", "0"]], "out of order"),  # unsorted
        ([["1-3,3", "0"]], "out of order"),  # overlapping
        ([["1-999999999", "0"]], "too large"),  # a damaged range must not fill the memory
        ([["1e3", "0"]], "not a ranges text"),
        ([[3, "0"]], "not a ranges text"),
        ([["-1", "0"]], "not a ranges text"),
    ],
)
def test_a_damaged_map_names_its_problem(raw: object, said: str) -> None:
    with pytest.raises(ValueError, match=said.replace("[", r"\[")):
        decode(raw, ("a", "b"))


@pytest.mark.parametrize(("raw", "said"), [("x", "not a list of strings"), (["0:a", "1:"], "twice"), ([1], "strings")])
def test_a_damaged_table_names_its_problem(raw: object, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        read_table(raw)


@given(st.lists(names, unique=True, max_size=30))
def test_the_table_reads_back_front_coded(raw: list[str]) -> None:
    assert read_table(json.loads(json.dumps(front_coded(table(raw))))) == table(raw)


def test_the_table_shares_the_prefixes_of_node_ids() -> None:
    ids = ["tests/test_v.py::test_p[1.0]", "tests/test_v.py::test_p[1.0a1]", "tests/test_v.py::test_q"]
    assert front_coded(ids) == ["0:tests/test_v.py::test_p[1.0]", "27:a1]", "22:q"]


@pytest.mark.parametrize("raw", [["5:abc"], ["abc"], ["0:a", "0:a"], ["0:ab", "3:c"]])
def test_a_damaged_front_coded_table_names_its_problem(raw: list[str]) -> None:
    with pytest.raises(ValueError, match="contexts"):
        read_table(raw)
