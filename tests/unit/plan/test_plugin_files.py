"""Installed pytest plugins that collect files python_files does not name: pytest-relaxed's spec modules
(conformance run 11, invoke 3.0.3: its tests are tests/cli.py, tests/collection.py…, none named test_*; the
discovery plan had no item and the run failed where plain pytest ran 984 tests)."""

from __future__ import annotations

from pathlib import Path

from ci_shards.plan.discover import discover_items
from ci_shards.plan.plugin_files import plugin_files, pytest11_plugins

SPEC = """
from _util import helper


class Collection_:
    class init:
        def accepts_tasks(self):
            pass

        def _private_helper(self):
            pass

    def adds_task(self):
        pass


def top_level_spec():
    pass


def _not_a_test():
    pass
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _site(tmp_path: Path, entry_points: str = "[pytest11]\nrelaxed = pytest_relaxed.plugin\n") -> str:
    site = tmp_path / "site"
    _write(site, {"pytest_relaxed-2.0.2.dist-info/entry_points.txt": entry_points, "other-1.0.dist-info/RECORD": ""})
    return str(site)


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    _write(
        project,
        {
            "tests/conftest.py": "import pytest\n",
            "tests/_util.py": "def helper(): pass\n",
            "tests/collection.py": SPEC,
            "tests/test_native.py": "def test_one(): pass\n",
            "tests/_support/tasks.py": "def spec(): pass\n",
            "tests/_support/test_hidden.py": "def test_hidden(): pass\n",
        },
    )
    return project


def test_the_entry_points_of_the_installed_distributions_are_read_without_importing(tmp_path: Path) -> None:
    site = _site(tmp_path, "[console_scripts]\nx = y:z\n\n[pytest11]\nrelaxed = pytest_relaxed.plugin\nk = a.b:c\n")
    assert pytest11_plugins([site, str(tmp_path / "missing")]) == {"relaxed": "pytest_relaxed.plugin", "k": "a.b"}


def test_discovery_plans_pytest_relaxeds_spec_modules_and_counts_their_tests(tmp_path: Path) -> None:
    project = _project(tmp_path)
    found, notes = discover_items(
        cwd=project, pytest_files=True, pytest_args=["tests"], globs=(), timings={}, search_path=[_site(tmp_path)]
    )
    # plain pytest with pytest-relaxed: collection.py's 3 spec tests and test_native.py's test; nothing under _*
    assert sorted(found.items) == ["tests/collection.py", "tests/test_native.py"]
    assert found.new_file_tests == {"tests/collection.py": 3, "tests/test_native.py": 1}
    assert any("pytest-relaxed is loaded" in note for note in notes)


def test_pytest_relaxed_blocked_or_not_loaded_leaves_pytests_own_rules(tmp_path: Path) -> None:
    project, site = _project(tmp_path), _site(tmp_path)

    def items(words: list[str], *, autoload: bool = True, path: str = site) -> list[str]:
        found, _notes = discover_items(
            cwd=project,
            pytest_files=True,
            pytest_args=words,
            globs=(),
            timings={},
            search_path=[path],
            autoload=autoload,
        )
        return sorted(found.items)

    native = ["tests/_support/test_hidden.py", "tests/test_native.py"]
    assert items(["tests", "-p", "no:relaxed"]) == native
    assert items(["tests"], autoload=False) == native  # PYTEST_DISABLE_PLUGIN_AUTOLOAD
    assert items(["tests", "--disable-plugin-autoload"]) == native
    assert items(["tests"], path=str(tmp_path / "empty")) == native  # not installed
    # named by -p with autoloading off: loaded all the same
    assert items(["tests", "-p", "pytest_relaxed.plugin"], autoload=False) == ["tests/collection.py", native[1]]


def test_plugin_files_are_off_without_the_plugin(tmp_path: Path) -> None:
    assert not plugin_files(["tests"], [str(tmp_path)]).spec_modules
    assert plugin_files(["tests"], [_site(tmp_path)]).spec_modules


def test_a_spec_module_with_doctests_is_planned_once_under_doctest_modules(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _write(project, {"tests/spec_doc.py": 'def spec():\n    """\n    >>> 1\n    1\n    """\n'})
    found, _notes = discover_items(
        cwd=project,
        pytest_files=True,
        pytest_args=["tests", "--doctest-modules"],
        globs=(),
        timings={},
        search_path=[_site(tmp_path)],
    )
    assert sorted(found.items) == ["tests/collection.py", "tests/spec_doc.py", "tests/test_native.py"]
    assert found.new_file_tests["tests/spec_doc.py"] == 2  # the spec test and its doctest
