"""pytest's -m/-k expressions evaluated three-valued: what a file's text decides, and what it leaves open."""

from __future__ import annotations

import pytest

from ci_shards.plan import mark_expr
from ci_shards.plan.pytest_args import last_value


def _value(expression: str, known: dict[str, bool]) -> bool | None:
    return mark_expr.evaluate(mark_expr.parse(expression), known.get)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("a", True),
        ("not a", False),
        ("a and b", False),
        ("a or b", True),
        ("b or c", None),  # c is undecided
        ("b and c", False),  # False and anything is False
        ("a or c", True),
        ("not c", None),
        ("not (b or c) and a", None),
        ("(a and not b) or c", True),
        ("", True),  # no expression selects everything, as in pytest
        ("m(x=1)", None),  # keyword arguments: undecided
        ("tests/a.py::Test[1-2]", None),  # pytest's identifier characters
    ],
)
def test_three_valued_evaluation(expression, expected):
    assert _value(expression, {"a": True, "b": False}) is expected


@pytest.mark.parametrize("expression", ["not", "a and", "(a", "a b", "a )", "or a", "a $ b"])
def test_what_pytest_refuses_is_an_error(expression):
    with pytest.raises(mark_expr.ExpressionError):
        mark_expr.parse(expression)


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["-m", "not slow", "tests"], "not slow"),
        (["-m", "a", "-m", "b"], "b"),  # the last wins, as pytest's parser keeps it
        (["-mslow"], "slow"),
        (["-p", "-m", "tests"], ""),  # -p's value, not an -m
        (["--maxfail", "2"], ""),
        ([], ""),
    ],
)
def test_last_value_of_an_option(words, expected):
    assert last_value(words, "-m") == expected
