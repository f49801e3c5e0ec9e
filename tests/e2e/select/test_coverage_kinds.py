"""Narrowing by executed code for each kind of change people make (issue 24): a statement replaced, one
inserted as a body's new first statement (after a docstring and its blank line, after a ``def`` whose body
opens with a comment, inside a nested function), one inserted between two statements, one deleted, and the
insertions that must still fall back. A real base run under ``ci-shards run --coverage``, every change
committed on its own branch off ``main``, then the selection asked and the real suite run at HEAD: every
failing test file is selected, and the narrowing drops the files that never ran the changed function.
``tests/conftest.py`` imports the module, so the import map alone selects every file."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_shards.select.apply import select_items
from ci_shards.select.decide import Selection
from ci_shards.select.settings import SelectionSettings
from tests.e2e.select.test_coverage import failing_test_files, measure, on_a_branch
from tests.e2e.select.test_git import commit

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="runs real shards"),
]

SHAPES = '''\
"""Shapes."""


def area(w, h):
    """The area."""

    product = w * h
    return product


def perimeter(w, h):
    # twice the sides
    total = w + h
    return 2 * total


class Grid:
    def cells(self, n):
        count = n * n
        return count

    def rows(self, n):
        return n


def scaled(factor):
    def apply(x):
        result = x * factor
        return result

    return apply


def squares(n):
    for i in range(n):
        yield i * i
'''
PROJECT = {
    ".gitignore": "__pycache__/\n",
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/shapes.py": SHAPES,
    "tests/conftest.py": "from pkg import shapes  # every test process imports the module\n",
    "tests/test_area.py": "from pkg.shapes import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n",
    "tests/test_perimeter.py": "from pkg.shapes import perimeter\n\n\ndef test_perimeter():\n"
    "    assert perimeter(2, 3) == 10\n",
    "tests/test_grid.py": "from pkg.shapes import Grid\n\n\ndef test_cells():\n    assert Grid().cells(3) == 9\n",
    "tests/test_rows.py": "from pkg.shapes import Grid\n\n\ndef test_rows():\n    assert Grid().rows(3) == 3\n",
    "tests/test_scaled.py": "from pkg.shapes import scaled\n\n\ndef test_scaled():\n    assert scaled(2)(3) == 6\n",
    # calls the generator function without iterating: on the base its body never runs in this file
    "tests/test_squares.py": "import inspect\n\nfrom pkg.shapes import squares\n\n\ndef test_lazy():\n"
    "    assert inspect.isgenerator(squares(3))\n",
}
TESTS = sorted(p for p in PROJECT if p.startswith("tests/test_"))
RAISE = 'raise RuntimeError("inserted")'


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return measure(tmp_path_factory.mktemp("kinds") / "repo", PROJECT)


@pytest.fixture
def repo(measured: Path) -> Iterator[Path]:
    yield from on_a_branch(measured)


def select(repo: Path, coverage: bool = True) -> Selection:
    artifact = str(repo.parent / "cov" / "coverage.json") if coverage else None
    return select_items(
        TESTS, cwd=repo, rootdir=None, env={}, settings=SelectionSettings(coverage=artifact), base="main"
    )


def insert_after(line: str, new: str) -> str:
    """SHAPES with ``new`` (indented like the line after ``line``) inserted after the unique line ``line``."""
    lines = SHAPES.splitlines(keepends=True)
    (index,) = [n for n, text in enumerate(lines) if text.strip() == line]
    following = next(text for text in lines[index + 1 :] if text.strip())
    indent = following[: len(following) - len(following.lstrip())]
    return "".join([*lines[: index + 1], f"{indent}{new}\n", *lines[index + 1 :]])


def delete(line: str) -> str:
    lines = SHAPES.splitlines(keepends=True)
    return "".join(text for text in lines if text.strip() != line)


@pytest.mark.parametrize(
    ("head", "selected"),
    [
        (SHAPES.replace("product = w * h", "product = w * h + 1"), {"tests/test_area.py"}),
        (insert_after('"""The area."""', RAISE), {"tests/test_area.py"}),  # after a docstring, before its blank line
        (insert_after("def perimeter(w, h):", RAISE), {"tests/test_perimeter.py"}),  # before a comment
        (insert_after("def apply(x):", RAISE), {"tests/test_scaled.py"}),  # inside a nested function
        (insert_after("count = n * n", RAISE), {"tests/test_grid.py"}),  # between two statements
        (delete("product = w * h"), {"tests/test_area.py"}),  # `return product` now fails
        (delete("count = n * n"), {"tests/test_grid.py"}),
    ],
    ids=[
        "replace",
        "insert-first-docstring",
        "insert-first-comment",
        "insert-nested",
        "insert-middle",
        "delete",
        "delete-method",
    ],
)
def test_each_kind_of_body_change_narrows_and_misses_nothing(repo: Path, head: str, selected: set[str]) -> None:
    commit(repo, {"src/pkg/shapes.py": head})
    chosen = select(repo)
    failing = failing_test_files(repo)
    assert failing == selected  # killed, and only where the narrowing looked
    assert set(chosen.selected) == selected, chosen.lines
    assert any(line.startswith("coverage narrowed src/pkg/shapes.py") for line in chosen.lines)
    assert set(select(repo, coverage=False).selected) == set(TESTS)  # the import map alone: everything


@pytest.mark.parametrize(
    ("head", "why"),
    [
        (insert_after("return count", "print('between two methods')"), "is outside any function body"),
        (insert_after("return product", "print('after the last line')"), "is outside any function body"),
        (SHAPES.replace("def rows(self, n):", "@staticmethod\n    def rows(self, n):"), "outside any function body"),
        (insert_after("def area(w, h):", RAISE), "outside any function body"),  # before the docstring
        (insert_after("product = w * h", "yield product"), "not the base's module"),  # now a generator
        # no longer a generator: a call now runs the body, also in test_squares.py, which never ran it on the base
        (SHAPES.replace("yield i * i", "return i * i"), "not the base's module"),
    ],
    ids=["between-methods", "after-last-line", "decorator", "before-docstring", "generator", "no-longer-generator"],
)
def test_a_change_outside_a_body_still_falls_back(repo: Path, head: str, why: str) -> None:
    commit(repo, {"src/pkg/shapes.py": head})
    chosen = select(repo)
    assert set(chosen.selected) == set(TESTS)
    assert any(line.startswith("coverage cannot narrow src/pkg/shapes.py:") and why in line for line in chosen.lines)
    assert failing_test_files(repo) <= set(chosen.selected)
