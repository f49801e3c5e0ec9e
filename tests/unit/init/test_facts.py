"""``init.facts.read_facts`` on real folders: the walk for a file pytest collects by its default names."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_shards.init.facts import read_facts


def _files(root: Path, *paths: str) -> Path:
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("", encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("paths", "first"),
    [
        (["tests/test_a.py", "tests/unit/test_b.py"], "tests/test_a.py"),
        (["check_test.py"], "check_test.py"),
        (["_test.py"], "_test.py"),  # fnmatch's * matches nothing too
        (["a/helpers.py", "b/sub/test_x.py"], "b/sub/test_x.py"),
        (["tests/conftest.py", "tests/helpers.py", "test.py", "test_a.txt"], ""),
        # pytest's default norecursedirs and a virtualenv keep these out of its collection, so out of init's look
        ([".tox/py/test_a.py", "node_modules/x/test_a.py", "venv/test_a.py", "build/test_a.py", "x.egg/test_a.py"], ""),
        (["env/pyvenv.cfg", "env/lib/test_a.py"], ""),
    ],
)
def test_the_first_file_pytests_default_names_collect(tmp_path: Path, paths: list[str], first: str) -> None:
    assert read_facts(_files(tmp_path, *paths)).pytest_test_file == first


@pytest.mark.parametrize("marker", ["pyproject.toml", "setup.py", "package.json", "go.mod", "requirements-dev.txt"])
def test_no_walk_where_a_project_file_names_the_project(tmp_path: Path, marker: str) -> None:
    root = _files(tmp_path, "tests/test_a.py")
    (root / marker).write_text("{}" if marker == "package.json" else "", encoding="utf-8")
    assert read_facts(root).pytest_test_file == ""
