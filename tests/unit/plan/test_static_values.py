"""Lengths of argument lists built from literals, computed from the text with nothing of the user's code run."""

from __future__ import annotations

import ast
import textwrap
import time
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.plan import static_values
from ci_shards.plan.static_values import MAX_ENTRIES, Values


def _length(source: str, expression: str) -> int | None:
    module = ast.parse(textwrap.dedent(source))
    return Values(module.body).length(ast.parse(expression, mode="eval").body)


MODULE = """
    import itertools
    import operator
    from itertools import product as cross
    from elsewhere import IMPORTED, Version

    VERSIONS = ["1.0", "1.1", "2.0", "2.0.post1"]
    PAIRS = [(a, b) for a in VERSIONS for b in VERSIONS]
    NUMBERS = list(range(5))
    TWICE = [1]
    TWICE = [1, 2]
    SELF = SELF + [1]
    BY_ID = {"parent": Version("1"), "child": Version("2"), "grandchild": IMPORTED}
    """


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # packaging 26.4's test_version.py: pairs of a literal list, by enumerate and slices
        ("[(x, y, operator.lt) for i, x in enumerate(VERSIONS) for y in VERSIONS[i + 1 :]]", 6),
        ("list(itertools.chain.from_iterable([[(x, y) for y in VERSIONS[:i]] for i, x in enumerate(VERSIONS)]))", 6),
        ("[[(x, x, operator.eq) for x in VERSIONS]] + [[1], [2]]", 3),
        ("[(x, y) for j, y in enumerate(VERSIONS) for i, x in enumerate(VERSIONS) if i != j]", 12),
        ("PAIRS", 16),
        ("list(cross(VERSIONS, NUMBERS))", 20),
        ("list(itertools.product(VERSIONS, repeat=2))", 16),
        ("list(itertools.combinations(NUMBERS, 2))", 10),
        ("[pytest.param(v, id=v) for v in VERSIONS]", 4),  # opaque entries: counted, never run
        ("[Version(v) for v in VERSIONS if v != '2.0']", 3),
        ("sorted(set(NUMBERS + [4, 5]))", 6),
        ("VERSIONS * 3", 12),
        ("[n for n in NUMBERS if n % 2 == 0 and n > 0]", 2),
        ("list(zip(VERSIONS, NUMBERS))", 4),
        ("[*VERSIONS, *NUMBERS]", 9),
        # a dict's views, and a dict itself, which parametrize iterates (its keys): cattrs 26.2.1's
        # ``parametrize("struct_unstruct", IDS_TO_STRUCT_UNSTRUCT.values(), ids=IDS_TO_STRUCT_UNSTRUCT)``
        ("BY_ID.values()", 3),  # opaque values ride along
        ("BY_ID.keys()", 3),
        ("BY_ID.items()", 3),
        ("BY_ID", 3),
        ("{v: 1 for v in VERSIONS}", 4),
        ("{v: 1 for v in ['a', 'a']}", 1),  # duplicate keys are one
        ("{Version(v): 1 for v in VERSIONS}", None),  # keys hashed: unknown ones make the length unknown
        ("IMPORTED.values()", None),  # a method of something unknown
        ("VERSIONS.count('1.0')", None),  # other methods are never run
        ("[IMPORTED.values(), BY_ID.items()]", 2),  # an unknown value's method: an opaque entry
        ("IMPORTED", None),
        ("[v for v in IMPORTED]", None),  # iterating something unknown
        ("sorted([Version(v) for v in VERSIONS])", None),  # comparing unknown values
        ("set(Version(v) for v in VERSIONS)", None),  # hashing them: duplicates unknown
        ("TWICE", None),  # bound twice
        ("SELF", None),  # defined through itself
        ("[x for x in range(10**9)]", None),  # past the work bound, promptly
        ("list(itertools.product(range(1000), range(1000)))", None),  # past MAX_ENTRIES, never built whole
        ("[0] * 10**9", None),
        ("len(VERSIONS)", None),  # a number, not a list
        ("[x async for x in VERSIONS]", None),
    ],
)
def test_lengths_built_from_literals(expression: str, expected: int | None):
    assert _length(MODULE, expression) == expected


def test_unknown_calls_are_never_run(tmp_path):
    marker = tmp_path / "ran"
    source = f"""
        import pathlib
        CASES = [pathlib.Path({str(marker)!r}).write_text("x") for _ in range(3)]
        """
    assert _length(source, "CASES") == 3  # three opaque entries: counted, not called
    assert not marker.exists()


def test_adversarial_sizes_end_quickly():
    started = time.process_time()
    assert _length("", f"[[a, b] for a in range({MAX_ENTRIES}) for b in range({MAX_ENTRIES})]") is None
    assert _length("", "[x for x in 'ab' * 10**6]") is None
    assert _length("", "[2 ** 10 ** 10]") == 1  # ** is never computed: one opaque entry
    assert time.process_time() - started < 30  # a bound on work, not a speed goal: it must end


def test_a_module_of_many_adversarial_expressions_stops_at_its_own_budget(monkeypatch: pytest.MonkeyPatch):
    # each length stops at MAX_STEPS; a file holding many such parametrize lists had cost MAX_STEPS each (2.7 s
    # apiece); the module's lengths together stop at MAX_MODULE_STEPS, and what is left is guessed
    monkeypatch.setattr(static_values, "MAX_STEPS", 1_000)
    monkeypatch.setattr(static_values, "MAX_MODULE_STEPS", 3_000, raising=False)
    calls = 0

    class Counted(Values):
        def value(self, node: ast.expr, local: Mapping[str, Any]) -> Any:
            nonlocal calls
            calls += 1
            return super().value(node, local)

    values = Counted(ast.parse("").body)
    adversarial = ast.parse("[[a, b] for a in range(100000) for b in range(100000)]", mode="eval").body
    assert [values.length(adversarial) for _ in range(10)] == [None] * 10
    assert calls <= 3_000 + 10  # not 10 x 1,000
    assert values.length(ast.parse("[1, 2, 3]", mode="eval").body) is None  # spent: the count's guess
    assert Counted(ast.parse("").body).length(ast.parse("[1, 2, 3]", mode="eval").body) == 3  # a module of its own


# comprehensions over literal lists, built as text, against Python's own evaluation of the same text
_names = st.sampled_from(["a", "b", "c"])
_lists = st.lists(st.integers(-3, 3), max_size=6).map(repr)


@st.composite
def _comprehensions(draw: st.DrawFn) -> str:
    loops = draw(st.lists(st.tuples(_names, _lists), min_size=1, max_size=3, unique_by=lambda t: t[0]))
    clauses = " ".join(f"for {name} in {values}" for name, values in loops)
    bound = [name for name, _values in loops]
    condition = draw(st.sampled_from(["", f" if {bound[0]} > 0", f" if {bound[-1]} % 2 == 0", f" if {bound[0]} != 1"]))
    wrap = draw(st.sampled_from(["[{}]", "list(({}))", "sorted({})", "[{}][:0] if False else [{}]"]))
    # sorted() compares its entries, so they must all be known; elsewhere an opaque one rides along
    entry = f"({', '.join(bound)},)" if wrap.startswith("sorted") else f"({', '.join(bound)}, opaque())"
    inner = f"{entry} {clauses}{condition}"
    return wrap.format(inner, inner)


@given(_comprehensions())
@settings(max_examples=150, deadline=None)
def test_a_computed_length_is_pythons(expression: str):
    expected = len(eval(expression, {"opaque": object}))  # our own generated text
    assert _length("", expression) == expected
