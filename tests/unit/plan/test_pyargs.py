"""``--pyargs`` names resolved on the file system as the import system would, nothing imported (issue 26.2)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ci_shards.common.errors import InputError
from ci_shards.plan.discover import discover_items, file_id
from ci_shards.plan.pyargs import module_location
from ci_shards.plan.pytest_args import positional_words

# a package that must not be run by planning: importing it would leave this file behind
EXECUTES = "open(__file__ + '.imported', 'w').close()\n"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_first_search_path_entry_holding_the_package_wins_and_nothing_is_imported(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _write(first, {"pkg/__init__.py": EXECUTES, "pkg/sub/__init__.py": EXECUTES, "pkg/sub/tests/test_a.py": ""})
    _write(second, {"pkg/__init__.py": "", "pkg/other/__init__.py": "", "mod.py": ""})
    assert module_location("pkg.sub", [first, second]) == first / "pkg/sub"
    assert module_location("pkg", [second, first]) == second / "pkg"
    assert module_location("pkg.other", [first, second]) is None  # pkg is first's: its __path__ is first/pkg
    assert module_location("mod", [first, second]) == second / "mod.py"
    assert module_location("pkg.sub.tests.test_a", [first]) == first / "pkg/sub/tests/test_a.py"
    assert module_location("no_such", [first, second]) is None
    assert module_location("not a name", [first]) is None
    assert not list(tmp_path.rglob("*.imported"))
    assert "pkg" not in sys.modules


def test_namespace_portions_merge_across_entries_but_a_namespace_is_not_a_target(tmp_path: Path) -> None:
    _write(tmp_path / "a", {"ns/one/__init__.py": ""})
    _write(tmp_path / "b", {"ns/two/__init__.py": ""})
    entries = [tmp_path / "a", tmp_path / "b"]
    assert module_location("ns.two", entries) == tmp_path / "b/ns/two"
    assert module_location("ns", entries) is None  # pytest's search_pypath does not take one either


def test_positional_words_are_what_pytest_takes_for_collection_arguments() -> None:
    words = ["--pyargs", "pkg.a", "-k", "fast", "pkg.b", "--ignore", "x", "-p", "no:randomly", "--cov", "-q"]
    assert positional_words(words) == ["pkg.a", "pkg.b"]


def test_a_file_outside_the_working_directory_is_named_relative_to_its_argument(tmp_path: Path) -> None:
    cwd, root = tmp_path / "work", tmp_path / "site/pkg/sub"
    assert file_id(root / "tests/test_a.py", cwd, root) == "tests/test_a.py"
    assert file_id(cwd / "tests/test_a.py", cwd, cwd / "tests") == "tests/test_a.py"
    inside = cwd / ".venv/site/pkg"  # an in-project venv: under the working directory, named from it
    assert file_id(inside / "tests/test_a.py", cwd, inside) == ".venv/site/pkg/tests/test_a.py"


def test_path_arguments_outside_the_working_directory_are_named_as_the_shards_name_them(tmp_path: Path) -> None:
    # execnet 2.1.2 from its doc/ folder: `-- ../testing/test_basics.py` was planned as "test_basics.py", which the
    # shard's plugin names "../testing/test_basics.py" (a named file is no folder that holds it): the shard's results
    # matched no planned item and the run failed where plain pytest passes. A folder argument outside names its
    # files from itself, as the plugin does, and the estimate reads them there (it looked for them in doc/)
    _write(tmp_path, {"testing/test_a.py": "def test_x(): pass\ndef test_y(): pass\n", "doc/conf.py": ""})
    doc = tmp_path / "doc"
    found, notes = discover_items(
        cwd=doc, pytest_files=True, pytest_args=["../testing/test_a.py"], globs=(), timings={}
    )
    assert found.items == ("../testing/test_a.py::test_x", "../testing/test_a.py::test_y")
    assert not [n for n in notes if "could not be read" in n]
    found, notes = discover_items(cwd=doc, pytest_files=True, pytest_args=["../testing"], globs=(), timings={})
    assert found.items == ("test_a.py::test_x", "test_a.py::test_y")
    assert not [n for n in notes if "could not be read" in n]


def test_discovery_with_pyargs_plans_the_named_packages_only_and_keeps_their_timings(tmp_path: Path) -> None:
    site, work = tmp_path / "site", tmp_path / "work"
    files = {"pkg/__init__.py": EXECUTES}
    for sub in ("a", "b", "c"):
        files |= {f"pkg/{sub}/__init__.py": "", f"pkg/{sub}/tests/test_{sub}.py": ""}
    _write(site, files)
    work.mkdir()
    timings = {"tests/test_a.py::t": 2.0, "tests/test_gone.py::t": 1.0}
    found, notes = discover_items(
        cwd=work,
        pytest_files=True,
        pytest_args=["--pyargs", "pkg.a", "pkg.b", "-q"],
        globs=(),
        timings=timings,
        search_path=[str(site)],
    )
    assert found.items == ("tests/test_a.py::t", "tests/test_b.py")
    assert (found.dropped_items, found.new_files) == (1, ("tests/test_b.py",))
    assert notes[0].startswith(
        f"discovered 2 test files in --pyargs pkg.a ({site / 'pkg/a'}), pkg.b ({site / 'pkg/b'})"
    )
    assert not list(tmp_path.rglob("*.imported"))


def test_a_pyargs_name_nothing_holds_is_an_input_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    args = ["--pyargs", "no_such_pkg_here"]
    with pytest.raises(InputError) as err:
        discover_items(cwd=tmp_path, pytest_files=True, pytest_args=args, globs=(), timings={}, search_path=[])
    assert str(err.value).startswith("no_such_pkg_here: --pyargs: no module or package of that name on the search")
    # a word that is no module but a path is collected as a path, as pytest does
    found, _ = discover_items(
        cwd=tmp_path, pytest_files=True, pytest_args=["--pyargs", "tests"], globs=(), timings={}, search_path=[]
    )
    assert found.items == ()


def test_a_package_an_import_hook_provides_is_found_by_its_top_level_name(tmp_path, monkeypatch) -> None:
    # an editable install's finder on sys.meta_path, as setuptools' strict mode installs one
    import importlib.util  # noqa: PLC0415

    _write(tmp_path / "src", {"hooked/__init__.py": EXECUTES, "hooked/sub/__init__.py": ""})

    class Finder:
        @staticmethod
        def find_spec(name, path, target=None):
            if name != "hooked":
                return None
            init = tmp_path / "src/hooked/__init__.py"
            return importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(init.parent)])

    monkeypatch.setattr(sys, "meta_path", [Finder, *sys.meta_path])
    assert module_location("hooked.sub", []) == tmp_path / "src/hooked/sub"
    assert not list(tmp_path.rglob("*.imported"))


def test_a_pyargs_module_with_a_node_id_plans_only_what_the_node_id_names(tmp_path: Path) -> None:
    # `--pyargs numpy.linalg.tests.test_linalg::TestSVD` from a neutral folder (conformance run 10): the plan held
    # every test of the module, and the shards' pytest, collecting TestSVD alone, never reported the others (170
    # "planned tests never ran" where plain pytest passes 18)
    site, work = tmp_path / "site", tmp_path / "work"
    module = "class TestA:\n    def test_x(self): pass\n\nclass TestB:\n    def test_y(self): pass\n"
    _write(site, {"pkg/__init__.py": EXECUTES, "pkg/tests/__init__.py": "", "pkg/tests/test_m.py": module})
    work.mkdir()
    args = ["--pyargs", "pkg.tests.test_m::TestB"]
    found, notes = discover_items(
        cwd=work, pytest_files=True, pytest_args=args, globs=(), timings={}, search_path=[str(site)]
    )
    named = Path("..") / "site" / "pkg" / "tests" / "test_m.py"
    assert found.items == (f"{named.as_posix()}::TestB::test_y",)
    assert notes[0].startswith(f"discovered 1 test file in --pyargs pkg.tests.test_m::TestB ({site / 'pkg'}")
    assert not list(tmp_path.rglob("*.imported"))
