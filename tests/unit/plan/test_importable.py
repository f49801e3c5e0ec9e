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


def test_a_dotted_name_needs_its_submodule_in_the_package(tmp_path: Path):
    # wcwidth 0.9.4's tests/test_fastcall_args.py: pytest.importorskip('wcwidth._wcwidth_c'), a C extension an
    # install from the sdist does not build: wcwidth is there, the submodule is not, pytest skips the 27 tests
    site = tmp_path / "site"
    (site / "pkg" / "sub").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("")
    (site / "pkg" / "sub" / "__init__.py").write_text("")
    (site / "pkg" / "sub" / "leaf.py").write_text("")
    (site / "pkg" / f"_ext{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    has = module_finder([str(site)])
    assert [has(n, []) for n in ("pkg.sub", "pkg.sub.leaf", "pkg._ext")] == [True] * 3
    assert not has("pkg._missing_c", []) and not has("pkg.sub.missing", []) and not has("pkg.nothere.leaf", [])
    assert not has("missing_pkg.sub", [])  # the top-level module first
    portion = tmp_path / "portion"  # a namespace portion (no __init__.py) of the file's own folders
    (portion / "pkg").mkdir(parents=True)
    (portion / "pkg" / "local_only.py").write_text("")
    (portion / "ns").mkdir()
    (portion / "ns" / "a.py").write_text("")
    (site / "ns").mkdir()
    (site / "ns" / "b.py").write_text("")
    # a regular package anywhere on the path wins over a portion, as in Python; portions alone count together
    assert not has("pkg.local_only", [portion]) and has("pkg._ext", [portion])
    assert has("ns.a", [portion]) and has("ns.b", [portion]) and not has("ns.c", [portion])
    # wcwidth 0.9.4: the unpacked sdist (the working directory, first) has the package without its compiled
    # module; the installed copy further down the path has it, but Python imports the first regular package
    checkout = tmp_path / "checkout"
    (checkout / "pkg").mkdir(parents=True)
    (checkout / "pkg" / "__init__.py").write_text("")
    assert not module_finder([str(checkout), str(site)])("pkg._ext", [])
    assert module_finder([str(site), str(checkout)])("pkg._ext", [])
    assert not has("pkg._ext", [checkout])  # the file's own folders come first


def test_a_dotted_name_whose_package_is_no_folder_here_counts_as_there():
    # the standard library's, a builtin's: in doubt, present (never a wrong "missing")
    has = module_finder([])
    assert has("xml.etree.ElementTree", []) and has("os.path", []) and has("json.decoder", [])
