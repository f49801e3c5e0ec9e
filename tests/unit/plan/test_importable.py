"""Whether the shards' interpreter has a module, answered from the file system (``plan/importable``)."""

from __future__ import annotations

import importlib.machinery
from pathlib import Path

from ci_shards.plan.importable import module_finder


def test_packages_modules_and_compiled_modules_on_the_search_path(tmp_path: Path):
    site = tmp_path / "site"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("")
    (site / "portion").mkdir()  # a namespace portion: importable too
    (site / "single.py").write_text("")
    (site / f"compiled{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    (site / "notes.txt").write_text("")
    has = module_finder([str(site)])
    assert [has(n, []) for n in ("pkg", "portion", "single", "compiled")] == [True] * 4
    assert not has("notes", [])  # a file of no import suffix
    assert not has("surely_missing_module_of_this_test", [])


def test_the_standard_library_and_builtins_need_no_search_path():
    has = module_finder([])
    assert has("json", []) and has("sys", []) and has("sqlite3", [])
    assert not has("scipy_not_installed_here", [])


def test_local_folders_count_for_that_file_only(tmp_path: Path):
    (tmp_path / "helpers.py").write_text("")
    has = module_finder([])
    assert has("helpers", [tmp_path])
    assert not has("helpers", [])  # the answer for the search path is cached apart from the folders


def test_what_is_no_module_name_is_never_called_missing():
    assert module_finder([])("not-a-name", [])
