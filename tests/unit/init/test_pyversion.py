"""requires-python read over the known minor versions (init.pyversion)."""

from __future__ import annotations

import pytest

from ci_shards.init.pyversion import allowed_pythons, from_poetry, minor_of


@pytest.mark.parametrize(
    ("spec", "allowed"),
    [
        (">=3.10", ("3.10", "3.11", "3.12", "3.13")),
        (">=3.9,<3.12", ("3.9", "3.10", "3.11")),
        (">=3.10.2, <3.12.1", ("3.10", "3.11", "3.12")),  # a patch bound keeps its minor
        ("~=3.11", ("3.11", "3.12", "3.13")),
        ("~=3.11.2", ("3.11",)),
        ("==3.12.*", ("3.12",)),
        (">3.11", ("3.12", "3.13")),
        (">=3.9,!=3.10.*", ("3.9", "3.11", "3.12", "3.13")),
        ("<=3.10", ("3.9", "3.10")),
        (">=4", ()),
    ],
)
def test_allowed(spec: str, allowed: tuple[str, ...]) -> None:
    assert allowed_pythons(spec) == (allowed, ())


def test_a_clause_it_cannot_read_is_reported() -> None:
    assert allowed_pythons(">=3.10, python_version") == (("3.10", "3.11", "3.12", "3.13"), ("python_version",))


@pytest.mark.parametrize(("line", "minor"), [("3.12.4", "3.12"), ("3.11", "3.11"), ("pypy3.10", None), ("3", None)])
def test_minor_of_a_python_version_line(line: str, minor: str | None) -> None:
    assert minor_of(line) == minor


@pytest.mark.parametrize(
    ("constraint", "spec", "allowed"),
    [
        ("^3.10", ">=3.10,<4", ("3.10", "3.11", "3.12", "3.13")),
        ("~3.11", ">=3.11,<3.12", ("3.11",)),
        ("~3", ">=3,<4", ("3.9", "3.10", "3.11", "3.12", "3.13")),
        ("^3.9.1", ">=3.9,<4", ("3.9", "3.10", "3.11", "3.12", "3.13")),
        (">=3.10,<3.13", ">=3.10,<3.13", ("3.10", "3.11", "3.12")),
        (">=3.10 <3.12", ">=3.10,<3.12", ("3.10", "3.11")),
        ("3.12", "==3.12", ("3.12",)),
        ("3.11.*", "==3.11.*", ("3.11",)),
        ("*", "", ("3.9", "3.10", "3.11", "3.12", "3.13")),
    ],
)
def test_poetrys_python_constraint_as_pep_440(constraint: str, spec: str, allowed: tuple[str, ...]) -> None:
    assert from_poetry(constraint) == spec
    assert allowed_pythons(spec) == (allowed, ())


def test_a_poetry_union_is_left_unread() -> None:
    assert allowed_pythons(from_poetry("^2.7 || ^3.10"))[1]
