"""Discovery: test files by the project's own pytest settings (read as text, never imported),
merged with the timings: new files planned whole and counted, deleted files' timings dropped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_shards.cli import main
from ci_shards.common.errors import InputError
from ci_shards.model.matching import item_file
from ci_shards.model.plan import Granularity, Plan, ShardPlan
from ci_shards.plan.discover import (
    DEFAULT_PYTHON_FILES,
    config_only_by_arguments,
    discover_items,
    discover_pytest_files,
    file_id,
    files_under,
    find_settings,
    folder_prefix,
    merge_with_timings,
    settings_given,
    whole_files_as_items,
)
from ci_shards.plan.pytest_args import ignores_in, path_words


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# ---------------------------------------------------------------------------------------------
# settings


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\ntestpaths = tests extra\npython_files = check_*.py\n"),
        ("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests", "extra"]\npython_files = "check_*.py"\n'),
        ("tox.ini", "[tox]\nenvlist = py\n[pytest]\ntestpaths =\n  tests\n  extra\npython_files = check_*.py\n"),
        ("setup.cfg", "[metadata]\nname = x\n[tool:pytest]\ntestpaths = tests extra\npython_files = check_*.py\n"),
    ],
)
def test_settings_are_read_from_every_file_pytest_reads(tmp_path, name, text):
    _write(tmp_path, {name: text})
    (tmp_path / "sub").mkdir()
    settings = find_settings(tmp_path / "sub")  # found in an ancestor, as pytest finds its rootdir
    assert settings.rootdir == tmp_path
    assert settings.source == str(tmp_path / name)
    assert settings.testpaths == ("tests", "extra")
    assert settings.python_files == ("check_*.py",)


def test_settings_precedence_and_defaults(tmp_path):
    # pytest.ini wins even when empty; a pyproject.toml without a pytest table does not count
    _write(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n", "setup.cfg": "[tool:pytest]\ntestpaths = t\n"})
    assert find_settings(tmp_path).testpaths == ("t",)
    _write(tmp_path, {"pytest.ini": ""})
    empty = find_settings(tmp_path)
    assert (empty.source, empty.testpaths, empty.python_files) == (
        str(tmp_path / "pytest.ini"),
        (),
        DEFAULT_PYTHON_FILES,
    )


def test_unreadable_settings_name_the_file(tmp_path):
    _write(tmp_path, {"pyproject.toml": "[tool.pytest.ini_options\n"})
    with pytest.raises(InputError, match=r"pyproject\.toml: cannot read pytest settings"):
        find_settings(tmp_path)
    _write(tmp_path, {"pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = 3\n"})
    with pytest.raises(InputError, match="'testpaths' must be a string or a list"):
        find_settings(tmp_path)


# ---------------------------------------------------------------------------------------------
# files


def test_files_found_as_pytest_would_find_them(tmp_path):
    _write(
        tmp_path,
        {
            "pytest.ini": "[pytest]\ntestpaths = tests\n",
            "tests/test_a.py": "",
            "tests/sub/b_test.py": "",
            "tests/helpers.py": "",
            "tests/.hidden/test_h.py": "",
            "tests/build/test_built.py": "",
            "tests/__pycache__/test_a.py": "",
            "tests/env/pyvenv.cfg": "",
            "tests/env/lib/test_site.py": "",
            "other/test_outside.py": "",
        },
    )
    settings = find_settings(tmp_path)
    assert discover_pytest_files(tmp_path, settings) == ["tests/sub/b_test.py", "tests/test_a.py"]
    # path arguments replace testpaths; a file named directly is taken whatever its name
    assert discover_pytest_files(tmp_path, settings, ["other", "tests/helpers.py"]) == [
        "other/test_outside.py",
        "tests/helpers.py",
    ]
    words = ["-p", "no:randomly", "other", "tests/test_a.py::test_x", "missing", "-x", "--ignore", "tests"]
    assert path_words(words, tmp_path) == ["other", "tests/test_a.py::test_x"]


@pytest.mark.parametrize("options", [[], ["--collect-in-virtualenv"]], ids=["default", "collect-in-virtualenv"])
def test_virtualenvs_and_conda_environments_are_walked_as_pytest_walks_them(tmp_path, options):
    """pytest leaves out a folder holding ``pyvenv.cfg`` or ``conda-meta/history`` unless
    ``--collect-in-virtualenv`` (``_pytest.main._in_venv``): the same files as its own collection."""
    files = {
        "tests/test_a.py": "def test_a():\n    pass\n",
        "tests/env/pyvenv.cfg": "",
        "tests/conda/conda-meta/history": "",
    }
    files |= {f"tests/{env}/test_{env}.py": "def test_x():\n    pass\n" for env in ("env", "conda")}
    _write(tmp_path, files)
    found = discover_pytest_files(tmp_path, find_settings(tmp_path), ["tests"], ignores_in(options, tmp_path))
    collect = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests", *options]
    listed = subprocess.run(collect, cwd=tmp_path, capture_output=True, text=True, check=False).stdout
    assert found == sorted({line.split("::")[0] for line in listed.splitlines() if "::" in line})
    assert len(found) == (3 if options else 1)


def test_symlinked_folders_and_files_are_walked_as_pytest_walks_them(tmp_path):
    """pytest follows a symlinked folder and names its files by the link (``_pytest.pathlib.visit``)."""
    _write(
        tmp_path, {"real/sub/test_r.py": "def test_r():\n    pass\n", "tests/test_t.py": "def test_t():\n    pass\n"}
    )
    (tmp_path / "tests" / "linked").symlink_to(Path("..") / "real" / "sub")
    (tmp_path / "tests" / "test_file_link.py").symlink_to(Path("..") / "real" / "sub" / "test_r.py")
    found = discover_pytest_files(tmp_path, find_settings(tmp_path), ["tests"])
    collect = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"]
    listed = subprocess.run(collect, cwd=tmp_path, capture_output=True, text=True, check=False).stdout
    assert found == sorted({line.split("::")[0] for line in listed.splitlines() if "::" in line})
    assert found == ["tests/linked/test_r.py", "tests/test_file_link.py", "tests/test_t.py"]


def test_ignore_options_from_the_arguments_and_addopts_leave_files_out(tmp_path):
    _write(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = -ra --ignore=tests/slow\n",
            "tests/test_a.py": "",
            "tests/slow/test_s.py": "",
            "tests/f2py/test_f.py": "",
            "tests/gen/test_gen_1.py": "",
            "tests/gen/test_keep.py": "",
        },
    )
    settings = find_settings(tmp_path)
    everything = discover_pytest_files(tmp_path, settings, ["tests"])
    assert len(everything) == 5
    words = [*settings.addopts, "tests", "--ignore", "tests/f2py", "--ignore-glob=*/gen/test_gen_*"]
    ignores = ignores_in(words, tmp_path)
    assert path_words(words, tmp_path) == ["tests"]
    assert discover_pytest_files(tmp_path, settings, ["tests"], ignores) == [
        "tests/gen/test_keep.py",
        "tests/test_a.py",
    ]
    # an ignored file is left out as an ignored folder is; paths with ./ and .. compare as pytest's do
    one_file = ignores_in(["--ignore=./tests/x/../test_a.py"], tmp_path)
    assert "tests/test_a.py" not in discover_pytest_files(tmp_path, settings, ["tests"], one_file)
    assert discover_items(
        cwd=tmp_path, pytest_files=True, pytest_args=["tests", "--ignore=tests/f2py"], globs=(), timings={}
    )[0].items == ("tests/gen/test_gen_1.py", "tests/gen/test_keep.py", "tests/test_a.py")


def test_testpaths_globs_and_norecursedirs(tmp_path):
    _write(
        tmp_path,
        {
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["pkg*/tests"]\nnorecursedirs = ["slow"]\n',
            "pkg1/tests/test_one.py": "",
            "pkg2/tests/slow/test_slow.py": "",
            "pkg2/tests/test_two.py": "",
        },
    )
    assert discover_pytest_files(tmp_path, find_settings(tmp_path)) == [
        "pkg1/tests/test_one.py",
        "pkg2/tests/test_two.py",
    ]


def test_testpaths_apply_only_from_the_rootdir_as_pytest_reads_them(tmp_path):
    # pytest 9.2's Config._decide_args: with no path argument, testpaths are the arguments only when pytest runs in
    # the rootdir, and when they match nothing there, or pytest runs elsewhere, it collects the working directory.
    # execnet 2.1.2 (tox.ini: testpaths = testing) from its doc/ folder: pytest collects doc/, where discovery
    # planned testing/'s files, named as if they were in doc/ (test_basics.py: no such file)
    _write(
        tmp_path,
        {
            "tox.ini": "[pytest]\ntestpaths = testing\n",
            "testing/test_gateway.py": "def test_a(): pass\n",
            "doc/example/test_example.py": "def test_b(): pass\n",
        },
    )
    doc = tmp_path / "doc"
    assert discover_pytest_files(doc, find_settings(doc)) == ["example/test_example.py"]
    found, notes = discover_items(cwd=doc, pytest_files=True, pytest_args=(), globs=(), timings={})
    # named as pytest names them: from its rootdir, tox.ini's folder, which the plan records
    assert (found.items, found.rootdir) == (("doc/example/test_example.py",), "..")
    assert notes[0].startswith("discovered 1 test file in the working directory (settings from ../tox.ini")
    assert discover_pytest_files(tmp_path, find_settings(tmp_path)) == ["testing/test_gateway.py"]
    # testpaths that name no folder: pytest warns and collects the working directory
    (tmp_path / "tox.ini").write_text("[pytest]\ntestpaths = missing other*\n")
    assert discover_pytest_files(tmp_path, find_settings(tmp_path)) == [
        "doc/example/test_example.py",
        "testing/test_gateway.py",
    ]


def test_settings_are_looked_for_from_the_path_arguments_as_pytest_looks_for_them(tmp_path):
    # pytest's determine_setup: from the common ancestor of the path arguments, up. python-dateutil 4.0.0 named from
    # the folder above it (-- python_dateutil-4.0.0/docs): its python_files (*_solution.py) were not read, and
    # docs/exercises/solutions/mlk_day_rrule_solution.py ran unplanned, reported "new since the plan"
    _write(
        tmp_path,
        {
            "proj/pyproject.toml": '[tool.pytest.ini_options]\npython_files = ["test_*.py", "*_solution.py"]\n',
            "proj/docs/mlk_solution.py": "def test_mlk(): pass\n",
            "proj/tests/test_a.py": "def test_a(): pass\n",
        },
    )
    found, notes = discover_items(
        cwd=tmp_path, pytest_files=True, pytest_args=["proj/docs", "proj/tests/test_a.py"], globs=(), timings={}
    )
    assert (found.items, found.rootdir) == (("docs/mlk_solution.py", "tests/test_a.py"), "proj")  # pytest's ids
    assert "settings from proj/pyproject.toml" in notes[0]
    # no path argument: from the working directory, up
    found, _ = discover_items(cwd=tmp_path / "proj", pytest_files=True, pytest_args=(), globs=(), timings={})
    assert found.items == ("docs/mlk_solution.py", "tests/test_a.py")


def test_a_norecursedirs_pattern_with_a_slash_matches_the_folders_path(tmp_path):
    # icalendar 7.3.2: norecursedirs = ["src/icalendar/tests/hypothesis", "build"]; pytest matches a pattern with a
    # separator against the folder's whole path, as "*/" + the pattern (``_pytest.pathlib.fnmatch_ex``), else its name
    _write(
        tmp_path,
        {
            "pyproject.toml": (
                '[tool.pytest.ini_options]\ntestpaths = ["src/pkg/tests"]\n'
                'norecursedirs = ["src/pkg/tests/hypothesis", "pkg/tests/fuzz*", "build"]\n'
            ),
            "src/pkg/tests/test_one.py": "",
            "src/pkg/tests/hypothesis/test_fuzzing.py": "",  # the whole path
            "src/pkg/tests/fuzzed/test_fuzzed.py": "",  # the path's tail, a glob
            "src/pkg/tests/build/test_built.py": "",  # a name
            "src/pkg/tests/other/hypothesis/test_kept.py": "",  # another folder of that name
        },
    )
    assert discover_pytest_files(tmp_path, find_settings(tmp_path)) == [
        "src/pkg/tests/other/hypothesis/test_kept.py",
        "src/pkg/tests/test_one.py",
    ]


# ---------------------------------------------------------------------------------------------
# merging with the timings


def test_merge_plans_new_files_whole_and_drops_deleted_ones():
    timings = {
        "tests/test_a.py::t1": 2.0,
        "tests/test_a.py::t2": 4.0,
        "tests/test_a.py": 9.0,  # an older whole-file key: the per-test ids win
        "tests/test_b.py": 10.0,
        "tests/test_gone.py::t": 1.0,
        "tests/test_gone.py::u": 1.0,
        "src/pkg/mod.py::pkg.mod.f": 0.5,  # a doctest: its file exists though discovery does not find it
    }
    on_disk = {"tests/test_a.py", "tests/test_b.py", "tests/test_new.py", "src/pkg/mod.py"}
    found = merge_with_timings(
        ["tests/test_a.py", "tests/test_b.py", "tests/test_new.py"], timings, on_disk.__contains__
    )
    assert found.items == (
        "src/pkg/mod.py::pkg.mod.f",
        "tests/test_a.py::t1",
        "tests/test_a.py::t2",
        "tests/test_b.py",
        "tests/test_new.py",
    )
    assert found.new_files == ("tests/test_new.py",)
    assert found.estimates["tests/test_new.py"] == 6.0  # the median file: 0.5, 6 and 10 s
    assert (found.dropped_items, found.dropped_files) == (2, 1)
    assert found.notes == [
        "1 test file without timings planned whole, each estimated at 6.0 s (the median known file): tests/test_new.py",
        "dropped the timings of 2 items in 1 file no longer on disk",
    ]
    assert merge_with_timings(["t.py"], {}, bool).estimates == {"t.py": 1.0}
    # numpy's median test file takes 0.03 s: the note says so rather than "0.0 s"
    tiny = merge_with_timings(["a.py", "new.py"], {"a.py::t": 0.0325}, lambda f: f == "a.py")
    assert "each estimated at 0.033 s (the median known file): new.py" in tiny.notes[0]


def test_merge_plans_the_tests_not_the_keys_that_cover_them():
    # the store records a cut file's part (a parametrized function, a class) as the sum of its tests
    # beside them; planned too, it is an item no test reports as ("never reported")
    timings = {
        "t.py": 1.0,
        "t.py::test_a": 0.3,
        "t.py::test_a[0]": 0.1,
        "t.py::test_a[x::y]": 0.2,
        "t.py::TestC": 0.4,
        "t.py::TestC::test_b[1]": 0.4,
        "t.py::test_c": 0.3,  # a test of its own: nothing under it
        "u.py::TestD": 2.0,  # a class without its tests: kept, it is all there is
    }
    found = merge_with_timings(["t.py", "u.py"], timings, lambda f: True)
    assert found.items == (
        "t.py::TestC::test_b[1]",
        "t.py::test_a[0]",
        "t.py::test_a[x::y]",
        "t.py::test_c",
        "u.py::TestD",
    )
    assert sum(found.estimates.values()) == pytest.approx(3.0)


def test_files_in_one_shard_are_named_whole():
    plan = Plan(
        total=2,
        granularity=Granularity.AUTO,
        shards=(
            ShardPlan(index=1, items=("a.py::t1", "a.py::t2", "b.py::t1"), estimated_seconds=3.0),
            ShardPlan(index=2, items=("b.py::t2", "c.py"), estimated_seconds=3.0),
        ),
        lower_bound_seconds=3.0,
        unknown_items=0,
    )
    whole = whole_files_as_items(plan)
    assert [s.items for s in whole.shards] == [("a.py", "b.py::t1"), ("b.py::t2", "c.py")]
    assert [s.estimated_seconds for s in whole.shards] == [3.0, 3.0]


# ---------------------------------------------------------------------------------------------
# the plan command


@pytest.fixture
def suite(tmp_path, monkeypatch):
    """A suite whose test modules cannot even be imported here: discovery must never import them."""
    boom = "raise SystemExit('imported user code')\n"
    _write(
        tmp_path,
        {
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
            "tests/conftest.py": boom,
            "tests/test_a.py": boom,
            "tests/test_b.py": boom,
            "tests/test_new.py": boom,
        },
    )
    timings = {f"tests/test_a.py::t{n}": 3.0 for n in range(4)} | {"tests/test_b.py::t": 5.0}
    timings |= {"tests/test_deleted.py::t": 7.0}
    (tmp_path / "durations.json").write_text(json.dumps(timings))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_plan_discover_merges_files_on_disk_with_the_timings(suite, capsys):
    assert main(["plan", "--discover", "--durations", "durations.json", "--shards", "2", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    plan = Plan.from_json(json.loads(out))
    planned = sorted(plan.items)
    assert "tests/test_new.py" in planned
    assert not [i for i in planned if "test_deleted" in i]
    assert plan.unknown_items == 1
    assert "discovered 3 test files in tests (settings from pyproject.toml" in err
    assert "dropped the timings of 1 item in 1 file no longer on disk" in err
    assert "1 test file without timings estimated from the tests each defines" in err
    # every file is covered exactly once: whole, or by its test ids in the shards it was cut into
    files = {i.split("::")[0] for i in planned}
    assert files == {"tests/test_a.py", "tests/test_b.py", "tests/test_new.py"}
    for file in files:
        assert not (file in planned and any(i.startswith(file + "::") for i in planned))


def test_plan_glob_beside_timings_finds_new_files(suite, capsys):
    args = ["plan", "--from-timings", "--glob", "tests/test_*.py", "--durations", "durations.json", "--shards", "1"]
    assert main([*args, "--format", "json"]) == 0
    plan = Plan.from_json(json.loads(capsys.readouterr().out))
    assert plan.items == ["tests/test_a.py", "tests/test_b.py", "tests/test_new.py"]  # one shard: all whole
    assert plan.unknown_items == 1


def test_discover_and_pytest_are_exclusive_and_args_need_one_of_them(suite, capsys):
    assert main(["plan", "--discover", "--pytest", "--durations", "durations.json", "--shards", "2"]) == 2
    assert "--pytest and --discover" in capsys.readouterr().err
    assert main(["plan", "--from-timings", "--durations", "durations.json", "--shards", "2", "--", "tests"]) == 2
    assert "arguments after -- are for --pytest or --discover" in capsys.readouterr().err


def test_minus_m_and_k_of_addopts_and_arguments_and_a_data_folder_reach_the_estimate(tmp_path):
    stress = "import pytest\n\n@pytest.mark.stress\n@pytest.mark.parametrize('n', range(100))\ndef test_s(n): pass\n"
    data = "import os, pytest\nHERE = os.path.join(os.path.dirname(__file__), 'cases')\n\n"
    data += "@pytest.mark.parametrize('f', os.listdir(HERE))\ndef test_case(f): pass\n"
    files = {
        "pytest.ini": "[pytest]\naddopts = -m 'not stress'\n",
        "tests/test_stress.py": stress + "def test_plain(): pass\n",
        "tests/test_data.py": data,
        **{f"tests/cases/c{n}.toml": "" for n in range(30)},
        "tests/cases/.hidden/skipped.toml": "",
    }
    _write(tmp_path, files)
    found, notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=["tests"], globs=(), timings={})
    assert found.estimates == {"tests/test_data.py": 30.0, "tests/test_stress.py": 1 + 100 * 0.05}
    assert "100 tests in 1 file that -m/-k deselect at 0.05 test each" in "\n".join(notes)
    assert "1 argument list not literal in 1 file sized by the files of the data folder each names" in "\n".join(notes)
    # the arguments' -k comes after addopts' -m: both apply; the last -m wins
    found, _ = discover_items(
        cwd=tmp_path, pytest_files=True, pytest_args=["tests", "-m", "stress", "-k", "not case"], globs=(), timings={}
    )
    assert found.estimates == {"tests/test_data.py": 30 * 0.05, "tests/test_stress.py": 100 + 0.05}


def test_a_data_path_counts_cases_by_name_a_list_file_by_the_files_it_names(tmp_path):
    cases = tmp_path / "cases"
    _write(cases, {"valid/a.toml": "", "valid/a.json": "", "valid/b.toml": "", "invalid/c.toml": "", "README": ""})
    (cases / "list").write_text("valid/a.toml\nvalid/a.json\n\ninvalid/c.toml\n", encoding="utf-8")
    (cases / "data.csv").write_text("x,y\n1,2\n3,4\n", encoding="utf-8")
    # x.toml and its expected x.json are one case; the README and the two text files are cases of their own
    assert files_under(cases) == 6
    assert files_under(cases, frozenset({".toml"})) == 3
    # a list file counts the lines that name a file beside it, of the selected suffixes
    assert files_under(cases / "list") == 3
    assert files_under(cases / "list", frozenset({".toml"})) == 2
    # a data file whose lines name no file is no list of cases; a path that is nothing counts nothing
    assert files_under(cases / "data.csv") == 0
    assert files_under(tmp_path / "missing") == 0


def test_imported_test_classes_and_importorskip_reach_the_estimate(tmp_path):
    base = "class BaseTests:\n    def test_a(self): pass\n    def test_b(self): pass\n"
    files = {
        "pytest.ini": "[pytest]\n",
        "tests/__init__.py": "",
        "tests/test_base.py": base + "class TestBase(BaseTests):\n    pass\n",
        # relative, then absolute from the file's folder (pytest's prepend import mode puts it first)
        "tests/test_sub.py": "from .test_base import TestBase as _B\nclass TestSub(_B):\n    def test_c(self): pass\n",
        "tests/helpers.py": base,
        "tests/test_abs.py": "from helpers import BaseTests\nclass TestAbs(BaseTests):\n    pass\n",
        # a class of an installed module is not read: only the suite's own files are
        "tests/test_installed.py": "from unittest import TestCase as C\nclass TestX(C):\n    def test_x(self): pass\n",
        "tests/test_skips.py": "import pytest\npytest.importorskip('surely_no_such_module')\ndef test_a(): pass\n",
        "tests/test_runs.py": "import pytest\njson = pytest.importorskip('json')\ndef test_a(): pass\n",
    }
    _write(tmp_path, files)
    found, notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=["tests"], globs=(), timings={})
    per_file: dict[str, float] = {}
    for item, seconds in found.estimates.items():
        per_file[item.split("::")[0]] = per_file.get(item.split("::")[0], 0.0) + seconds
    assert per_file == {
        "tests/test_base.py": 2.0,
        "tests/test_sub.py": 3.0,
        "tests/test_abs.py": 2.0,
        "tests/test_installed.py": 1.0,
        "tests/test_skips.py": 0.1,  # its import only
        "tests/test_runs.py": 1.0,
    }
    assert "1 file of 1 test that a module-level importorskip of a module this interpreter lacks" in "\n".join(notes)


def test_conftest_hooks_that_make_tests_no_file_count_sees_are_named(tmp_path):
    hooks = (
        "import pytest\n"
        "def pytest_collect_file(parent, file_path):\n"
        "    if file_path.suffix == '.txt':\n"
        "        return pytest.File.from_parent(parent, path=file_path)\n"
        "def pytest_generate_tests(metafunc): pass\n"
    )
    files = {
        "pytest.ini": "[pytest]\n",
        "tests/conftest.py": "def helper(): pass\ncollect_ignore = ['old']\n",  # a conftest without such hooks
        "tests/snippets/conftest.py": hooks,
        "tests/snippets/a.txt": "",
        "tests/snippets/test_a.py": "def test_a(): pass\n",
        "tests/other/conftest.py": "class Plugin:\n    def pytest_collect_file(self): pass\n",  # not module level
        "tests/other/test_b.py": "def test_b(): pass\n",
        "ignored/conftest.py": hooks,  # outside what pytest collects: never read
    }
    _write(tmp_path, files)
    found, notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=["tests"], globs=(), timings={})
    assert found.items == ("tests/other/test_b.py", "tests/snippets/test_a.py")  # the .txt file is not planned
    unseen = [n for n in notes if n.startswith("not counted")]
    assert unseen == [
        "not counted: the tests that hooks make in 1 conftest.py file, tests/snippets/conftest.py"
        " (pytest_collect_file, pytest_generate_tests): files of other kinds collected as tests run unplanned in"
        " the shard that runs unplanned files, and generated cases count as one test; a --pytest plan balances"
        " what pytest collects"
    ]
    _write(tmp_path, {"tests/snippets/conftest.py": "def pytest_configure(config): pass\n"})
    _, notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=["tests"], globs=(), timings={})
    assert not [n for n in notes if n.startswith("not counted")]


def test_hooks_of_the_plugin_modules_a_conftest_loads_are_named_where_they_are(tmp_path: Path) -> None:
    files = {
        "pytest.ini": "[pytest]\n",
        # a string of names too, as pytest reads it; one installed (not in the project): not read
        "tests/conftest.py": "pytest_plugins = ['lib.testing.plugin', 'pytest_installed_elsewhere']\n",
        "src/lib/__init__.py": "",
        "src/lib/testing/__init__.py": "",
        # loads another in turn, and itself back: each read once
        "src/lib/testing/plugin.py": "pytest_plugins = 'lib.testing.more, lib.testing.plugin'\n"
        "def pytest_pycollect_makeitem(collector, name, obj): pass\n",
        "src/lib/testing/more/__init__.py": "def pytest_generate_tests(metafunc): pass\n",
        "tests/test_a.py": "def test_a(): pass\n",
    }
    _write(tmp_path, files)
    _, notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=["tests"], globs=(), timings={})
    unseen = [n for n in notes if n.startswith("not counted")]
    assert len(unseen) == 1
    assert unseen[0].startswith(
        "not counted: the tests that hooks make in 2 files, src/lib/testing/more/__init__.py (pytest_generate_tests),"
        " src/lib/testing/plugin.py (pytest_pycollect_makeitem): "
    )


def test_testpaths_apply_only_from_the_rootdir_as_pytest_decides_its_arguments(tmp_path):
    # pytest's Config._decide_args: testpaths when run from the rootdir (each a recursive glob, those matching
    # nothing dropped), else the working directory
    _write(
        tmp_path,
        {
            "pytest.ini": "[pytest]\ntestpaths = tests/unit missing\n",
            "tests/unit/test_u.py": "",
            "tests/test_t.py": "",
            "other/test_o.py": "",
        },
    )
    settings = find_settings(tmp_path)
    assert discover_pytest_files(tmp_path, settings) == ["tests/unit/test_u.py"]
    below = tmp_path / "tests"
    assert discover_pytest_files(below, find_settings(below)) == ["test_t.py", "unit/test_u.py"]
    _write(tmp_path, {"pytest.ini": "[pytest]\ntestpaths = missing\n"})
    assert len(discover_pytest_files(tmp_path, find_settings(tmp_path))) == 3


def _discover(cwd: Path, words: list[str], timings: dict[str, float]) -> tuple[tuple[str, ...], list[str]]:
    found, notes = discover_items(cwd=cwd, pytest_files=True, pytest_args=words, globs=(), timings=timings)
    return found.items, notes


def test_timings_pytest_would_not_collect_from_the_arguments_are_not_planned(tmp_path):
    # the timings of the whole suite, a run of tests/unit: planned, tests/test_b.py's tests were never collected by
    # the shard that drew them, which failed with "planned but never reported"
    _write(tmp_path, {"tests/unit/test_a.py": "def test_a(): pass\n", "tests/test_b.py": "def test_b(): pass\n"})
    timings = {"tests/unit/test_a.py::test_a": 1.0, "tests/test_b.py::test_b": 2.0, "tests/test_b.py::test_c": 2.0}
    items, notes = _discover(tmp_path, ["tests/unit"], timings)
    assert items == ("tests/unit/test_a.py::test_a",)
    assert (
        "not planned: the timings of 2 items in 1 file pytest does not collect from tests/unit (tests/test_b.py)"
        in notes
    )
    assert _discover(tmp_path, [], timings)[0] == tuple(sorted(timings))


def test_a_modules_dotted_name_in_the_timings_is_that_files_timing(tmp_path):
    # `timings import` of pytest's own --junitxml: a module that skipped at collection is the testcase
    # classname="" name="tests.test_np"; discovery said its timing was of a file "pytest does not collect"
    _write(tmp_path, {"tests/test_np.py": "def test_x(): pass\n", "tests/test_a.py": "def test_a(): pass\n"})
    timings = {"tests.test_np": 0.0, "tests/test_a.py::test_a": 1.0}
    found, notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=["tests"], globs=(), timings=timings)
    assert found.items == ("tests/test_a.py::test_a", "tests/test_np.py")
    assert found.estimates["tests/test_np.py"] == 0.0  # its timing, not an estimate from the test it defines
    assert not [n for n in notes if n.startswith("not planned")], notes


def test_node_id_arguments_plan_only_what_they_name(tmp_path):
    _write(
        tmp_path,
        {
            "tests/test_b.py": "def test_b(): pass\nclass TestC:\n    def test_c(self): pass\n",
            "tests/test_d.py": "def test_d(): pass\ndef test_e(): pass\n",
        },
    )
    # a file without timings is offered by its parts: only the named one is planned
    assert _discover(tmp_path, ["tests/test_b.py::TestC"], {})[0] == ("tests/test_b.py::TestC::test_c",)
    # a node id no part names (a case of a parametrized test the count does not see): the file, whole
    assert _discover(tmp_path, ["tests/test_d.py::test_f"], {})[0] == ("tests/test_d.py",)
    timings = {"tests/test_b.py::test_b": 1.0, "tests/test_b.py::TestC::test_c": 1.0, "tests/test_d.py::test_d": 1.0}
    items, notes = _discover(tmp_path, ["tests/test_b.py::TestC", "tests/test_d.py"], timings)
    assert items == ("tests/test_b.py::TestC::test_c", "tests/test_d.py::test_d")
    assert any("the timings of 1 item in 1 file pytest does not collect" in n for n in notes)


def test_a_folders_skipped_collector_in_the_timings_is_no_file_to_plan_and_nothing_dropped(tmp_path):
    # a conftest.py that skips its folder is one skipped test (the folder's collector), recorded as known
    _write(tmp_path, {"tests/opt/conftest.py": "", "tests/opt/test_o.py": "def test_o(): pass\n"})
    items, notes = _discover(tmp_path, [], {"tests/opt": 0.0, "tests/opt/test_o.py::test_o": 1.0})
    assert items == ("tests/opt/test_o.py::test_o",)
    assert not [n for n in notes if "dropped" in n]


def test_from_a_subfolder_the_ids_are_pytests_from_its_rootdir_and_the_timings_read_either_way(tmp_path):
    # pytest names tests from its rootdir (the settings' folder) wherever it runs: from tests/ its node id is
    # tests/test_a.py::test_a; discovery named it test_a.py::test_a, another id for the same test, and timings
    # recorded at the root were dropped as "no longer on disk"
    _write(
        tmp_path,
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n",
            "tests/test_a.py": "def test_a(): pass\n",
            "tests/test_b.py": "def test_b(): pass\n",
        },
    )
    below = tmp_path / "tests"
    recorded_at_the_root = {"tests/test_a.py::test_a": 2.0}
    recorded_below_before = {"test_b.py::test_b": 3.0}  # the old cwd-relative ids still read
    found, notes = discover_items(
        cwd=below, pytest_files=True, pytest_args=(), globs=(), timings=recorded_at_the_root | recorded_below_before
    )
    assert found.rootdir == ".."
    assert found.items == ("tests/test_a.py::test_a", "tests/test_b.py::test_b")
    assert found.estimates == {"tests/test_a.py::test_a": 2.0, "tests/test_b.py::test_b": 3.0}
    assert not [n for n in notes if "dropped" in n]
    # from the root: the same ids, no rootdir to record; a --rootdir of the user's decides it otherwise
    assert discover_items(cwd=tmp_path, pytest_files=True, pytest_args=(), globs=(), timings={})[0].rootdir is None
    own = discover_items(cwd=below, pytest_files=True, pytest_args=["--rootdir=."], globs=(), timings={})[0]
    assert (own.items, own.rootdir) == (("test_a.py", "test_b.py"), None)


def test_a_pyproject_without_a_pytest_table_is_pytests_rootdir_when_nothing_else_is(tmp_path):
    # pytest 9.2's locate_config: no settings anywhere, the nearest pyproject.toml is the configfile and its folder
    # the rootdir (sqlparse 0.5.5, wrapt 2.5.2 from their tests/: node ids tests/test_cli.py::...)
    _write(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n", "tests/test_a.py": "def test_a(): pass\n"})
    settings = find_settings(tmp_path / "tests")
    assert (settings.rootdir, settings.source) == (tmp_path, str(tmp_path / "pyproject.toml"))
    found, _ = discover_items(cwd=tmp_path / "tests", pytest_files=True, pytest_args=(), globs=(), timings={})
    assert (found.items, found.rootdir) == (("tests/test_a.py",), "..")
    # real settings anywhere up the tree win over it, as pytest's search returns the first that has them
    _write(tmp_path, {"tests/unit/tox.ini": "[tox]\n", "tox.ini": "[pytest]\n"})
    assert find_settings(tmp_path / "tests" / "unit").source == str(tmp_path / "tox.ini")


def test_with_no_settings_file_a_setup_py_folder_is_pytests_rootdir(tmp_path):
    # determine_setup: no configfile anywhere, the nearest folder with a setup.py is the rootdir; with none, the
    # working directory (for arguments under it), where discovery's own names are pytest's
    _write(tmp_path, {"setup.py": "", "tests/test_a.py": "def test_a(): pass\n"})
    found, _ = discover_items(cwd=tmp_path / "tests", pytest_files=True, pytest_args=(), globs=(), timings={})
    assert (found.items, found.rootdir) == (("tests/test_a.py",), "..")
    (tmp_path / "setup.py").unlink()
    found, _ = discover_items(cwd=tmp_path / "tests", pytest_files=True, pytest_args=(), globs=(), timings={})
    assert (found.items, found.rootdir) == (("test_a.py",), None)


def test_timings_of_files_above_the_working_directory_are_not_planned_from_it(tmp_path):
    # recorded at the root (ids from the rootdir), planned from tests/: docs/test_d.py is no file pytest collects
    # there, and was said "dropped ... no longer on disk"
    _write(tmp_path, {"pytest.ini": "[pytest]\n", "tests/test_a.py": "", "docs/test_d.py": ""})
    timings = {"tests/test_a.py::t": 1.0, "docs/test_d.py::t": 2.0}
    found, notes = discover_items(cwd=tmp_path / "tests", pytest_files=True, pytest_args=(), globs=(), timings=timings)
    assert found.items == ("tests/test_a.py::t",)
    assert any(n.startswith("not planned: the timings of 1 item in 1 file") for n in notes), notes
    assert not [n for n in notes if "dropped" in n]


OVERRIDDEN = {
    "pytest.ini": "[pytest]\ntestpaths = tests\naddopts = -o python_classes=Check\n",
    "tests/test_a.py": "def test_a(): pass\n",
    "tests/check_c.py": "def test_c(): pass\n",
    "other/test_o.py": "def test_o(): pass\n",
    "alt.ini": "[pytest]\npython_files = check_*.py\n",
    "alt.toml": "[tool.pytest.ini_options]\ntestpaths = ['other']\n",
    "alt.cfg": "[tool:pytest]\npython_files = check_*.py\ntestpaths = tests\n",
}


@pytest.mark.parametrize(
    ("words", "files"),
    [
        # -o replaces a setting, the last of a key winning, as pytest's parse_override_ini keeps it
        (["-o", "python_files=check_*.py"], {"tests/check_c.py"}),
        (["--override-ini=testpaths=other"], {"other/test_o.py"}),
        (["-opython_files=x_*.py", "-o", "python_files=check_*.py test_*.py"], {"tests/check_c.py", "tests/test_a.py"}),
        # -c is the settings file, instead of pytest.ini (whose testpaths no longer apply), by its suffix's loader
        (["-c", "alt.ini"], {"tests/check_c.py"}),
        (["--config-file=alt.toml"], {"other/test_o.py"}),
        (["--inifile", "alt.cfg"], {"tests/check_c.py"}),
        (["-c", "/dev/null", "other"], {"other/test_o.py"}),  # a path that is no file: pytest's defaults
    ],
)
def test_the_command_lines_config_file_and_overrides_decide_what_is_discovered(tmp_path, words, files):
    # before: discovery read pytest.ini only; `-o python_files=check_*.py` planned tests/test_a.py, which the shard
    # then collected as a planned file while plain pytest did not, and `-o testpaths=other` the wrong folder
    _write(tmp_path, OVERRIDDEN)
    items, _ = _discover(tmp_path, words, {})
    assert {item_file(i) for i in items} == files


def test_an_override_in_the_addopts_applies_and_a_later_one_wins(tmp_path):
    _write(tmp_path, OVERRIDDEN)
    settings = settings_given(find_settings(tmp_path), ["-o", "testpaths=other"], tmp_path)
    assert (settings.python_classes, settings.testpaths) == (("Check",), ("other",))
    assert settings_given(settings, ["-o", "python_classes=Mine"], tmp_path).python_classes == ("Mine",)
    assert settings_given(settings, ["-o", "not_a_setting_of_ours=1", "-o", "novalue"], tmp_path) == settings


@pytest.mark.parametrize(
    ("files", "python_files"),
    [
        # pytest 9's own files come first, before pytest.ini, and count even without a [pytest] table
        ({"pytest.toml": "[pytest]\npython_files = ['check_*.py']\n", "pytest.ini": "[pytest]\n"}, ("check_*.py",)),
        ({".pytest.toml": "[pytest]\npython_files = 'x_*.py'\n", "tox.ini": "[pytest]\n"}, ("x_*.py",)),
        ({"pytest.toml": "", "pyproject.toml": "[tool.pytest.ini_options]\npython_files = 'no.py'\n"}, None),
    ],
)
def test_pytests_own_toml_files_are_read_first(tmp_path, files, python_files):
    _write(tmp_path, files)
    settings = find_settings(tmp_path)
    assert settings.source == str(tmp_path / next(iter(files)))
    assert settings.python_files == (python_files or DEFAULT_PYTHON_FILES)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("alt.toml", "[pytest]\npython_files = ['check_*.py']\n"),  # pytest 9.2 reads [pytest] from any .toml
        ("alt.toml", "[tool.pytest.ini_options]\npython_files = 'check_*.py'\n"),
        ("pyproject.toml", "[tool.pytest.ini_options]\npython_files = 'check_*.py'\n"),
        ("custom.toml", "[tool.pytest]\npython_files = ['check_*.py']\n"),
    ],
)
def test_a_toml_file_named_by_c_is_read_by_its_name_then_its_suffix(tmp_path, name, text):
    _write(
        tmp_path, {name: text, "tests/check_c.py": "def test_c(): pass\n", "tests/test_a.py": "def test_a(): pass\n"}
    )
    items, _ = _discover(tmp_path, ["-c", name, "tests"], {})
    assert {item_file(i) for i in items} == {"tests/check_c.py"}


MONOREPO = {
    "proj_a/pytest.ini": "[pytest]\npython_files = check_*.py\n",
    "proj_a/tests/check_a.py": "def test_a(): pass\n",
    "proj_a/tests/test_a2.py": "def test_a2(): pass\n",
    "proj_b/tests/test_b.py": "def test_b(): pass\n",
    "proj_b/tests/check_b.py": "def test_b(): pass\n",
}


@pytest.mark.parametrize(
    ("words", "b_id"),
    [
        (["proj_a/tests", "proj_b/tests"], "check_b.py"),
        (["proj_b/tests", "proj_a/tests"], "check_b.py"),
        (["proj_a/tests/check_a.py", "proj_b"], "tests/check_b.py"),
    ],
)
def test_arguments_in_two_projects_read_the_first_projects_settings_as_pytest_does(tmp_path, words, b_id):
    # pytest from a monorepo's root: no settings above both folders, so determine_setup looks up from each
    # argument's own folder and takes proj_a's pytest.ini (python_files check_*.py) for both; discovery took the
    # defaults and planned 4 files where pytest collects 2, naming proj_b's file from the argument that holds it
    _write(tmp_path, MONOREPO)
    found, _ = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=words, globs=(), timings={})
    assert found.rootdir == "proj_a"
    assert sorted(found.items) == sorted([b_id, "tests/check_a.py"])
    assert config_only_by_arguments(words, tmp_path) == str(tmp_path / "proj_a/pytest.ini")


@pytest.mark.parametrize("words", [["proj_a/tests", "proj_b/tests"], ["proj_a/tests/check_a.py", "proj_b"]])
def test_timings_of_a_file_outside_the_rootdir_are_read_back_under_the_name_pytest_gave_it(tmp_path, words):
    # the timings a run wrote name proj_b's file as pytest does, from the argument that holds it (check_b.py);
    # read back, that name was looked up under the rootdir only and the file planned as if it had no timing
    _write(tmp_path, MONOREPO)
    first, _ = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=words, globs=(), timings={})
    timings = {f"{item}::test_{item[-4]}": 7.0 for item in first.items}
    found, _ = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=words, globs=(), timings=timings)
    assert sorted(found.items) == sorted(timings)
    assert found.new_files == () and found.dropped_items == 0 and sum(found.estimates.values()) == 14.0, found


def test_settings_above_the_arguments_or_a_setup_py_come_first(tmp_path):
    _write(tmp_path, MONOREPO)
    assert config_only_by_arguments(["proj_a/tests"], tmp_path) == ""  # found up from the arguments' common folder
    (tmp_path / "setup.py").write_text("")
    assert config_only_by_arguments(["proj_a/tests", "proj_b/tests"], tmp_path) == ""  # pytest stops at setup.py
    assert find_settings(tmp_path, arg_dirs=[tmp_path / "proj_a/tests"]).rootdir == tmp_path


def test_a_setting_given_empty_is_empty_not_pytests_default(tmp_path):
    # pytest reads `python_files =` (or `-o python_files=`) as no pattern at all: no file collects by its name;
    # discovery took the empty value for an absent one and planned test_a.py, which the shard then ran
    _write(tmp_path, {"pytest.ini": "[pytest]\npython_files =\n", "tests/test_a.py": "def test_a(): pass\n"})
    assert find_settings(tmp_path).python_files == ()
    assert _discover(tmp_path, ["tests"], {})[0] == ()
    settings = settings_given(
        find_settings(tmp_path), ["-o", "norecursedirs=", "-o", "python_files=test_*.py"], tmp_path
    )
    assert (settings.norecursedirs, settings.python_files) == ((), ("test_*.py",))
    assert find_settings(tmp_path / "tests").python_files == ()  # found above, the same file


def test_pyproject_tool_pytest_tables_are_read_as_pytest_9_reads_them(tmp_path):
    # pytest 9.2's _config_from_tool_pytest (conformance run 11, by hand beside hpack 4.2.0's [tool.pytest]):
    # [tool.pytest] beside a non-empty [tool.pytest.ini_options] is its usage error (exit 4) before any collection;
    # discovery had planned the ini_options' testpaths and its shard failed with "2 errors"
    both = "[tool.pytest]\ntestpaths = ['tests']\n\n[tool.pytest.ini_options]\ntestpaths = 'other'\n"
    _write(tmp_path, {"pyproject.toml": both, "tests/test_a.py": "def test_a(): pass\n"})
    with pytest.raises(InputError, match=r"Cannot use both \[tool.pytest\]"):
        discover_items(cwd=tmp_path, pytest_files=True, pytest_args=(), globs=(), timings={})
    # an empty ini_options table beside native keys is no conflict, and the native keys are the settings
    _write(tmp_path, {"pyproject.toml": "[tool.pytest]\ntestpaths = ['tests']\n[tool.pytest.ini_options]\n"})
    assert find_settings(tmp_path).testpaths == ("tests",)
    # a [tool.pytest] holding nothing is no settings: pytest takes the tox.ini beside it
    _write(tmp_path, {"pyproject.toml": "[tool.pytest]\n", "tox.ini": "[pytest]\ntestpaths = tests\n"})
    settings = find_settings(tmp_path)
    assert (settings.source, settings.testpaths) == (str(tmp_path / "tox.ini"), ("tests",))


def test_a_pytest_toml_setting_outside_the_pytest_table_is_pytests_usage_error(tmp_path):
    # pytest 9.2's _config_from_pytest_table: "pytest configuration must be under a [pytest] table"
    _write(tmp_path, {"pytest.toml": "testpaths = ['tests']\n", "tests/test_a.py": "def test_a(): pass\n"})
    with pytest.raises(InputError, match=r"must be under a \[pytest\] table \(found top-level options: testpaths\)"):
        discover_items(cwd=tmp_path, pytest_files=True, pytest_args=(), globs=(), timings={})
    _write(tmp_path, {"pytest.toml": "[tool.other]\nx = 1\n"})  # tables only: pytest's defaults, rooted here
    assert find_settings(tmp_path).source == str(tmp_path / "pytest.toml")


@pytest.mark.parametrize("word", ["tests/test_gone.py", "tests/test_gone.py::test_x[1]", "gone::t", "test_gone.py"])
def test_a_test_path_argument_that_names_nothing_is_refused_as_pytest_refuses_it(tmp_path: Path, word: str) -> None:
    # plain pytest stops with "ERROR: file or directory not found: …" (exit 4) and runs no test; a discovery plan
    # dropped the word and its shards each failed with "zero tests executed" (conformance run 10)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    args = ["tests/test_a.py", word]
    with pytest.raises(InputError) as err:
        discover_items(cwd=tmp_path, pytest_files=True, pytest_args=args, globs=(), timings={}, search_path=[])
    assert str(err.value).startswith(f"{word}: file or directory not found")
    # any other word may be an option's value this reader does not know (`--my-plugin-option value`, pytest-html's
    # `--html reports/run.html`, a file yet to be written): left to pytest
    for value in ("value", "reports/run.html", "build/allure"):
        found, _ = discover_items(
            cwd=tmp_path, pytest_files=True, pytest_args=["tests", value], globs=(), timings={}, search_path=[]
        )
        assert found.items == ("tests/test_a.py",)


_PARTS = st.lists(st.sampled_from(["a", "b", "tests", ".."]), max_size=4)


@given(cwd=_PARTS, root=_PARTS, folder=_PARTS, name=st.sampled_from(["test_x.py", "data.txt"]))
def test_a_files_id_worked_out_from_its_folder_is_pytests_rule_on_its_own_path(
    cwd: list[str], root: list[str], folder: list[str], name: str
) -> None:
    # the walk names its files from their folder's prefix, worked out once per folder; pytest's rule reads the
    # file's own path: relative to the working directory when under it, else to the collection argument it was
    # found in, else relative to the working directory again; the same ids wherever the folder stands
    base = Path("/w")
    here, top, at = base.joinpath(*cwd), base.joinpath(*root), base.joinpath(*root, *folder)
    path = at / name
    if path != here and here not in path.parents and top in path.parents:
        by_the_rule = path.relative_to(top).as_posix()
    else:
        by_the_rule = Path(os.path.relpath(path, here)).as_posix()
    assert file_id(path, here, top) == folder_prefix(at, here, top) + name == by_the_rule
