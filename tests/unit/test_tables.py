"""common/tables.py: the one walk into pyproject.toml's nested tables."""

from __future__ import annotations

import pytest

from ci_shards.common.tables import table_at

# what tomllib makes of `tool = {pytest = {ini_options = {}}, poetry = "not a table"}` and
# `[project.entry-points.pytest11]` with `mine = "pkg.plugin"` (a dict literal: tomllib is Python 3.11's)
DOC = {
    "tool": {"pytest": {"ini_options": {}}, "poetry": "not a table"},
    "project": {"entry-points": {"pytest11": {"mine": "pkg.plugin"}}},
}


def test_the_table_at_the_keys() -> None:
    assert table_at(DOC, "project", "entry-points", "pytest11") == {"mine": "pkg.plugin"}
    assert table_at(DOC, "tool") == {"pytest": {"ini_options": {}}, "poetry": "not a table"}


def test_an_empty_table_is_one_and_a_missing_one_none() -> None:
    assert table_at(DOC, "tool", "pytest", "ini_options") == {}  # pytest counts it as its settings
    assert table_at(DOC, "tool", "ci-shards") is None
    assert table_at({}, "project") is None


@pytest.mark.parametrize(
    "keys", [("tool", "poetry"), ("tool", "poetry", "group"), ("project", "entry-points", "pytest11", "mine")]
)
def test_a_value_of_another_kind_on_the_way_is_none(keys: tuple[str, ...]) -> None:
    assert table_at(DOC, *keys) is None


def test_no_keys_is_the_document() -> None:
    assert table_at(DOC) is DOC
