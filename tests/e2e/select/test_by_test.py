"""Narrowing to the tests that ran a changed body, not their whole files (issue 24): a real base run under
``ci-shards run --coverage`` (per-test contexts), the real fold, every change committed on its own branch off
``main``, then the selection asked with the suite's test ids as items and the real suite run at HEAD.

A test file keeps only its tests that executed the changed function, and every failing test is selected;
a module-scoped fixture that ran the function keeps every test of its file (they all use what its one
setup computed), and so does a file whose tests keep state in its module for each other; a test that ran
on the base without executing any of the project's code is dropped, and one the base run never had (a
new test in a file the change does not touch) is kept."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_shards.coverage.context_map import decode, parse_ranges, read_table
from ci_shards.select.apply import select_items
from ci_shards.select.decide import Selection
from ci_shards.select.settings import SelectionSettings
from tests.e2e.select.test_coverage import failing_tests, measure, on_a_branch
from tests.e2e.select.test_git import commit

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="runs real shards"),
]

SHAPES = """\
    def area(w, h):
        product = w * h
        return product


    def perimeter(w, h):
        total = w + h
        return 2 * total


    def cells(n):
        count = n * n
        return count
    """
PROJECT = {
    ".gitignore": "__pycache__/\n",
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/shapes.py": SHAPES,
    "tests/conftest.py": "from pkg import shapes  # every test process imports the module\n",
    "tests/test_shapes.py": """\
        from pkg.shapes import area, perimeter


        def test_area():
            assert area(2, 3) == 6


        def test_perimeter():
            assert perimeter(2, 3) == 10


        def test_quiet():
            assert "no project code" in "it runs no project code"
        """,
    # test_read depends on what test_fill kept in the module, never running perimeter itself
    "tests/test_state.py": """\
        from pkg.shapes import perimeter

        SEEN = []


        def test_fill():
            SEEN.append(perimeter(1, 1))


        def test_read():
            assert SEEN == [4]
        """,
    "tests/test_grid.py": """\
        import pytest

        from pkg.shapes import area, cells


        @pytest.fixture(scope="module")
        def nine():
            return cells(3)


        def test_nine(nine):
            assert nine == 9


        def test_positive(nine):
            assert nine > 0


        def test_square():
            assert area(3, 3) == 9
        """,
}
BASE_TESTS = [
    "tests/test_grid.py::test_nine",
    "tests/test_grid.py::test_positive",
    "tests/test_grid.py::test_square",
    "tests/test_shapes.py::test_area",
    "tests/test_shapes.py::test_perimeter",
    "tests/test_shapes.py::test_quiet",
    "tests/test_state.py::test_fill",
    "tests/test_state.py::test_read",
]
NEW = "tests/test_shapes.py::test_added_later"  # an item the base run never had


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = {path: textwrap.dedent(text) for path, text in PROJECT.items()}
    return measure(tmp_path_factory.mktemp("by-test") / "repo", files)


@pytest.fixture
def repo(measured: Path) -> Iterator[Path]:
    yield from on_a_branch(measured)


def select(repo: Path, coverage: bool = True, artifact_path: Path | None = None) -> Selection:
    artifact = str(artifact_path or repo.parent / "cov" / "coverage.json") if coverage else None
    return select_items(
        [*BASE_TESTS, NEW], cwd=repo, rootdir=None, env={}, settings=SelectionSettings(coverage=artifact), base="main"
    )


def change(repo: Path, old: str, new: str) -> None:
    text = textwrap.dedent(SHAPES)
    assert old in text
    commit(repo, {"src/pkg/shapes.py": text.replace(old, new, 1)})


@pytest.mark.parametrize(
    ("old", "new", "selected"),
    [
        # area runs in test_area and test_square, in two files: neither file's other tests are kept
        (
            "product = w * h\n",
            "product = w * h + 1\n",
            {"tests/test_shapes.py::test_area", "tests/test_grid.py::test_square"},
        ),
        (
            "    total = w + h\n",
            "    raise RuntimeError('inserted')\n    total = w + h\n",
            {"tests/test_shapes.py::test_perimeter", *BASE_TESTS[-2:]},  # a file whose tests share state: whole
        ),
        # cells ran in the module fixture's one setup, which test_nine and test_positive both use
        ("    count = n * n\n", "    count = n * n\n    count += 1\n", set(BASE_TESTS[:3])),
    ],
    ids=["replace-in-two-files", "insert-first", "module-fixture"],
)
def test_a_body_change_selects_the_tests_that_ran_it(repo: Path, old: str, new: str, selected: set[str]) -> None:
    change(repo, old, new)
    chosen = select(repo)
    failing = failing_tests(repo)
    assert failing and failing <= selected  # killed, and nothing failing is left out
    assert set(chosen.selected) == {*selected, NEW}, chosen.lines  # the new test: the map cannot vouch for it
    assert "tests/test_shapes.py::test_quiet" in chosen.skipped  # ran on the base, executed no project code
    assert set(select(repo, coverage=False).selected) == {*BASE_TESTS, NEW}  # the import map alone: everything


def written_before_the_table(artifact: Path, out: Path) -> Path:
    """The artifact as the fold wrote it before the compact map (issue 24): per file ``tests`` (every context's
    lines) and ``tests_ran`` as names, no ``contexts`` table, ``context_lines`` or ``tests_ran_contexts``."""
    data = json.loads(artifact.read_text(encoding="utf-8"))
    names = read_table(data.pop("contexts"))
    data["tests_ran"] = [names[i] for i in parse_ranges(data.pop("tests_ran_contexts"))]
    for entry in data["files"].values():
        entry["tests"] = {t: list(ls) for t, ls in decode(entry.pop("context_lines"), names).expand().items()}
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("product = w * h\n", "product = w * h + 1\n"),
        ("    total = w + h\n", "    raise RuntimeError('inserted')\n    total = w + h\n"),
        ("    count = n * n\n", "    count = n * n\n    count += 1\n"),
        ("def cells(n):\n", "def cells(n, m=0):\n"),  # a signature, not a body: both fall back alike
    ],
    ids=["replace", "insert-first", "module-fixture", "signature"],
)
def test_the_compact_map_selects_what_the_per_context_map_did(repo: Path, old: str, new: str) -> None:
    artifact = repo.parent / "cov" / "coverage.json"
    data = json.loads(artifact.read_text(encoding="utf-8"))
    assert "contexts" in data and all("tests" not in f for f in data["files"].values())  # written compact
    before = written_before_the_table(artifact, repo.parent / "coverage-old.json")
    change(repo, old, new)
    compact, per_context = select(repo), select(repo, artifact_path=before)
    assert compact.selected == per_context.selected and compact.skipped == per_context.skipped
    assert compact.lines == per_context.lines
