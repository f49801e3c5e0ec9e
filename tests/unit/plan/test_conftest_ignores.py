"""collect_ignore and collect_ignore_glob read from conftest.py as text, with pytest's nearest-wins rule."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ci_shards.plan.conftest_ignores import ConftestIgnores, literal_lists
from ci_shards.plan.discover import discover_items, discover_pytest_files, find_settings


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('collect_ignore = ["setup.py", "old"]\n', {"collect_ignore": ["setup.py", "old"]}),
        ('collect_ignore: list[str] = ("a.py",)\n', {"collect_ignore": ["a.py"]}),
        (
            'collect_ignore = ["a.py"]\ncollect_ignore += ["b.py"]\ncollect_ignore.append("c.py")\n'
            'collect_ignore.extend(["d.py"])\n',
            {"collect_ignore": ["a.py", "b.py", "c.py", "d.py"]},
        ),
        (
            'collect_ignore_glob = ["*_py2.py"]\ncollect_ignore = []\n',
            {"collect_ignore_glob": ["*_py2.py"], "collect_ignore": []},
        ),
        # defined, but computed: known to be there, its contents are not
        ('collect_ignore = [x for x in ["a.py"]]\n', {"collect_ignore": []}),
        ('collect_ignore = ["a.py", NAME, "b" + ".py"]\n', {"collect_ignore": ["a.py"]}),
        # under a condition on the interpreter (the plan's is the shards'), decided as Python decides it: cattrs
        # 26.2.1's conftest leaves test_gen_dict_649.py out below 3.14, its *_695.py files below 3.12
        ('import sys\nif sys.version_info < (3, 99):\n    collect_ignore = ["a.py"]\n', {"collect_ignore": ["a.py"]}),
        (
            "import sys, platform\ncollect_ignore_glob = []\n"
            'if sys.version_info < (3, 9):\n    collect_ignore_glob.append("old.py")\n'
            'elif sys.version_info[:2] >= (3, 9) and not sys.platform.startswith("nosuch"):\n'
            '    collect_ignore_glob += ["new.py"]\n'
            'if platform.python_implementation() == "NoSuchPython":\n    collect_ignore_glob.append("x_cpython.py")\n'
            'if sys.implementation.name != "nosuch" or sys.version_info[0] == 2:\n'
            '    collect_ignore_glob.extend(["y.py"])\n',
            {"collect_ignore_glob": ["new.py", "y.py"]},
        ),
        # other conditions: not known here (the shard's plugin asks pytest)
        ('import os\nif os.environ.get("CI"):\n    collect_ignore = ["a.py"]\n', {}),
        ('if sys.version_info < (3, 99):\n    collect_ignore = ["a.py"]\n', {}),  # sys not imported: some other name
        ('import sys\nif sys.version_info > (3, 99) or X:\n    collect_ignore = ["a.py"]\n', {}),
        ('def f():\n    collect_ignore = ["a.py"]\n', {}),
        ("collect_ignore = [\n", {}),  # a syntax error: pytest will say so itself
        ('other = ["a.py"]\nothers.append("x")\n', {}),
    ],
)
def test_literal_lists(source, expected):
    assert literal_lists(source) == expected


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


SUITE = {
    "pytest.ini": "[pytest]\n",
    "conftest.py": 'collect_ignore = ["tests/legacy"]\ncollect_ignore_glob = ["*_py2.py"]\n',
    "tests/test_a.py": "def test_a():\n    pass\n",
    "tests/test_b_py2.py": "def test_b():\n    pass\n",
    "tests/legacy/test_old.py": "def test_old():\n    pass\n",
    # the nearest conftest defining collect_ignore wins: the root's tests/legacy rule does not reach
    # inside tests/sub, whose own list names one of its files, relative to itself
    "tests/sub/conftest.py": 'collect_ignore = ["test_skip.py"]\n',
    "tests/sub/test_skip.py": "def test_skip():\n    pass\n",
    "tests/sub/test_keep.py": "def test_keep():\n    pass\n",
    "tests/sub/test_c_py2.py": "def test_c():\n    pass\n",  # the root's glob still applies
}


def test_discovery_leaves_out_what_pytest_leaves_out(tmp_path):
    _write(tmp_path, SUITE)
    found = discover_pytest_files(tmp_path, find_settings(tmp_path), ["tests"])
    assert found == ["tests/sub/test_keep.py", "tests/test_a.py"]
    # the same answer as pytest's own collection
    collect = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"]
    listed = subprocess.run(collect, cwd=tmp_path, capture_output=True, text=True, check=False).stdout
    assert sorted({line.split("::")[0] for line in listed.splitlines() if "::" in line}) == found


@pytest.mark.parametrize(
    "options",
    [["--noconftest"], ["--confcutdir", "tests"], ["--confcutdir=tests/sub"]],
    ids=["noconftest", "cut-at-tests", "cut-below-both"],
)  # all loaded: test_discovery_leaves_out_what_pytest_leaves_out
def test_discovery_reads_the_conftest_files_pytest_loads(tmp_path, options):
    """``--noconftest`` loads none, ``--confcutdir DIR`` none in a folder above DIR (pytest's
    _is_in_confcutdir): their collect_ignore rules then leave nothing out, as in pytest's own collection."""
    _write(tmp_path, SUITE)
    found, _notes = discover_items(
        cwd=tmp_path, pytest_files=True, pytest_args=["tests", *options], globs=(), timings={}
    )
    collect = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests", *options]
    listed = subprocess.run(collect, cwd=tmp_path, capture_output=True, text=True, check=False).stdout
    assert sorted(found.items) == sorted({line.split("::")[0] for line in listed.splitlines() if "::" in line})


def test_timings_of_left_out_files_are_dropped_and_the_plan_says_why(tmp_path):
    _write(tmp_path, SUITE)
    timings = {"tests/test_a.py::test_a": 1.0, "tests/legacy/test_old.py::test_old": 2.0, "tests/sub/test_skip.py": 1.0}
    found, notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=["tests"], globs=(), timings=timings)
    assert found.items == ("tests/sub/test_keep.py", "tests/test_a.py::test_a")
    assert found.dropped_items == 0  # not "no longer on disk": left out by the project
    note = next(n for n in notes if n.startswith("left out"))
    assert note.startswith("left out 4 paths that conftest.py's collect_ignore names: ")
    assert {"tests/legacy", "tests/test_b_py2.py", "tests/sub/test_skip.py", "tests/sub/test_c_py2.py"} == set(
        note.split(": ", 1)[1].split(", ")
    )


def test_no_conftest_above_the_root_counts(tmp_path):
    _write(tmp_path, {"conftest.py": 'collect_ignore = ["project/tests/test_a.py"]\n', "project/tests/test_a.py": ""})
    rules = ConftestIgnores(tmp_path / "project")
    assert not rules.leaves_out(tmp_path / "project" / "tests" / "test_a.py")
    assert ConftestIgnores(tmp_path).leaves_out(tmp_path / "project" / "tests" / "test_a.py")
