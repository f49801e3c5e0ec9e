"""plan/doctests.py: the doctests ``--doctest-modules`` collects, counted from a module's text, held to the real
``doctest.DocTestFinder`` (what pytest's DoctestModule asks) on the module executed; and discovery planning the
modules that hold them (issue 25: the first plan counts what pytest will run, doctests included)."""

from __future__ import annotations

import doctest
import json
import textwrap
import types
from pathlib import Path

import pytest

from ci_shards.cli import main
from ci_shards.model.plan import Plan
from ci_shards.plan.discover import discover_items
from ci_shards.plan.doctests import collects_doctest_modules, count_doctests, doctest_globs, doctest_module

MODULES = {
    "none": "def f():\n    'no examples'\n",
    "module and function": '''
        """The module.

        >>> 1 + 1
        2
        """
        def f():
            """>>> f()"""
        ''',
    "classes, methods, properties, nested classes": '''
        class A:
            """>>> A()"""
            def m(self):
                """
                    >>> A().m()
                """
            @property
            def p(self):
                """>>> A().p"""
            @staticmethod
            def s():
                """text, then
                >>> A.s()
                """
            class B:
                """>>> A.B()"""
                def deeper(self):
                    """>>> 3"""
        ''',
    "a function inside a function is not looked into": '''
        def outer():
            """plain"""
            def inner():
                """>>> inner()"""
            return inner
        ''',
    "definitions under if, try and with": '''
        import sys, contextlib
        if sys.version_info >= (3,):
            def g():
                """>>> g()"""
        else:
            def g():
                """>>> g()"""
        try:
            async def h():
                """>>> h"""
        except ImportError:
            def fallback():
                """>>> never bound"""
        with contextlib.suppress(Exception):
            class W:
                """>>> W()"""
        ''',
    "a name an import binds last is another module's object": '''
        class OrderedDict(dict):
            """a local copy, >>> on the first line is no prompt
            >>> OrderedDict()
            {}
            """
        from collections import OrderedDict
        ''',
    "prompts in strings that are no docstring": 'X = """\n>>> not a docstring\n"""\ndef f():\n    x = ">>> 1"\n',
}


def _finder_count(source: str) -> int:
    """What pytest's DoctestModule yields items for: the finder's tests that have examples."""
    module = types.ModuleType("sample")
    exec(compile(source, "sample.py", "exec"), module.__dict__)  # the test's own fixed sources
    return sum(1 for test in doctest.DocTestFinder().find(module, "sample") if test.examples)


@pytest.mark.parametrize("source", MODULES.values(), ids=MODULES.keys())
def test_the_count_is_the_doctest_finders(source: str) -> None:
    text = textwrap.dedent(source)
    assert count_doctests(text.encode()) == _finder_count(text)


def test_the_samples_hold_doctests_to_count() -> None:
    # the comparison above means something only if the finder finds some
    assert [_finder_count(textwrap.dedent(s)) for s in MODULES.values()] == [0, 2, 6, 0, 3, 0, 0]


@pytest.mark.parametrize(
    ("words", "collects"),
    [
        (["--doctest-modules"], True),
        (["tests", "--doctest-modules", "-q"], True),
        ([], False),
        (["--doctest-glob=*.rst"], False),
        (["--doctest-modules", "-p", "no:doctest"], False),
        (["-pno:doctest", "--doctest-modules"], False),
        (["-k", "doctest", "tests/--doctest-modules"], False),  # a path word, not the option
    ],
)
def test_the_flag_and_the_plugin_decide(words: list[str], collects: bool) -> None:
    assert collects_doctest_modules(words) is collects


def test_pytest_leaves_a_setuptools_setup_py_and_main_py_out() -> None:
    assert not doctest_module("setup.py", b"from setuptools import setup\nsetup()\n")
    assert not doctest_module("setup.py", b"from distutils.core import setup\n")
    assert doctest_module("setup.py", b'"""\n>>> 1\n1\n"""\n')
    assert not doctest_module("__main__.py", b"")
    assert doctest_module("conftest.py", b"") and doctest_module("__init__.py", b"")


DOCTESTED = '"""\n>>> 1 + 1\n2\n"""\n\n\ndef f():\n    """\n    >>> f()\n    """\n'


def _project(root: Path, addopts: str) -> None:
    files = {
        "pytest.ini": f"[pytest]\naddopts = {addopts}\nnorecursedirs = skipped\n",
        "pkg/__init__.py": "",
        "pkg/mod.py": DOCTESTED,
        "pkg/plain.py": "def g():\n    return 1\n",
        "pkg/__main__.py": DOCTESTED,
        "pkg/skipped/deep.py": DOCTESTED,
        "setup.py": "from setuptools import setup\n" + DOCTESTED,
        "tests/test_a.py": "def test_a():\n    pass\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_discovery_plans_the_modules_holding_doctests_with_their_count(tmp_path: Path) -> None:
    _project(tmp_path, "--doctest-modules")
    found, notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=[], globs=[], timings={})
    # pkg/plain.py holds none; __main__.py, a setuptools setup.py and a norecursedirs folder pytest leaves out
    assert found.items == ("pkg/mod.py", "tests/test_a.py")
    assert found.new_file_tests["pkg/mod.py"] == 2
    assert "planned 1 module for the doctests --doctest-modules collects from them (2 doctests counted" in " ".join(
        notes
    )


def test_a_test_file_holding_doctests_is_never_cut_under_doctest_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # its docstring example is an item of the file (tests/test_a.py::test_a.helper) that no part names: cut into
    # its 12 test functions, the example ran unplanned ("ran, not planned")
    monkeypatch.chdir(tmp_path)
    tests = [f"def test_{i}():\n    pass\n" for i in range(12)]
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(DOCTESTED + "\n".join(tests))
    (tmp_path / "tests" / "test_b.py").write_text("def test_b():\n    pass\n")
    argv = ["plan", "--discover", "--shards", "3", "--format", "json", "--", "tests"]
    for words, cut in (([], True), (["--doctest-modules"], False)):
        assert main([*argv, *words]) == 0
        items = [i for s in Plan.from_json(json.loads(capsys.readouterr().out)).shards for i in s.items]
        assert ("tests/test_a.py" not in items) is cut, items


def test_without_the_flag_no_module_is_planned(tmp_path: Path) -> None:
    _project(tmp_path, "-q")
    found, notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=[], globs=[], timings={})
    assert found.items == ("tests/test_a.py",)
    assert not [n for n in notes if "doctest" in n]
    # the user's own arguments turn it on as addopts do
    found, _notes = discover_items(
        cwd=tmp_path, pytest_files=True, pytest_args=["--doctest-modules"], globs=[], timings={}
    )
    assert found.items == ("pkg/mod.py", "tests/test_a.py")


@pytest.mark.parametrize(
    ("words", "globs"),
    [
        ([], ["test*.txt"]),  # pytest's default, no flag needed
        (["--doctest-glob", "*.rst", "--doctest-glob=*.md", "tests"], ["*.rst", "*.md"]),
        (["--doctest-glob", "*.rst", "-p", "no:doctest"], []),
    ],
)
def test_the_text_files_pytest_takes_for_doctests(words: list[str], globs: list[str]) -> None:
    assert sorted(doctest_globs(words)) == sorted(globs)


def test_discovery_plans_the_text_files_the_doctest_globs_match(tmp_path: Path) -> None:
    _project(tmp_path, "-q")
    for name, text in {
        "tests/test_notes.txt": ">>> 1 + 1\n2\n",  # the default glob
        "tests/test_empty.txt": "no example: no item",
        "docs/guide.rst": ">>> 2\n2\n",
        "tests/test_b.py": "def test_b():\n    pass\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found, notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=[], globs=[], timings={})
    assert found.items == ("tests/test_a.py", "tests/test_b.py", "tests/test_notes.txt")
    assert "planned 1 text file pytest collects as one doctest each (--doctest-glob test*.txt)" in " ".join(notes)
    found, _notes = discover_items(
        cwd=tmp_path, pytest_files=True, pytest_args=["--doctest-glob=*.rst"], globs=[], timings={}
    )
    assert found.items == ("docs/guide.rst", "tests/test_a.py", "tests/test_b.py")
