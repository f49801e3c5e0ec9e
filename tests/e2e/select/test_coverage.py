"""Narrowing by executed code, end to end: a real base run under `ci-shards run --coverage` (per-test-file
contexts), the real fold, then changes committed on a branch and the selection asked (docs/selection.md).

One project, measured once on ``main``; every test commits its change on its own branch off ``main``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from ci_shards.select.apply import select_items
from ci_shards.select.decide import Selection
from ci_shards.select.settings import SelectionSettings
from tests.e2e.gitignore import write_gitignore
from tests.e2e.select.test_git import commit, git

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="runs real shards"),
]

CALC = """\
    import functools


    def add(a, b):
        total = a + b
        return total


    def sub(a, b):
        return a - b


    def scale(x, factor=2):
        return x * factor


    @functools.lru_cache
    def table():
        return {"one": 1}


    def prepare():
        return 5


    class Box:
        def value(self):
            return 7


    LIMIT = 10
    """
PROJECT = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/pkg/__init__.py": "",
    "src/pkg/calc.py": CALC,
    "tests/conftest.py": """\
        import pytest
        from pkg import calc


        @pytest.fixture(scope="session")
        def prepared():
            return calc.prepare()
        """,
    "tests/test_add.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "tests/test_sub.py": "from pkg.calc import sub, table\n\n\ndef test_sub():\n"
    "    assert sub(3, 2) == table()['one']\n",
    "tests/test_scale.py": """\
        from pkg.calc import Box, scale, table


        def test_scale(prepared):
            assert scale(prepared) == 10 and table() == {"one": 1} and Box().value() == 7
        """,
    # skipped in the base environment: no context in the map, so it is never dropped by narrowing
    "tests/test_skipped.py": """\
        import pytest
        from pkg.calc import add

        pytestmark = pytest.mark.skip(reason="not here")


        def test_add_again():
            assert add(2, 2) == 4
        """,
}
TESTS = ("tests/test_add.py", "tests/test_scale.py", "tests/test_skipped.py", "tests/test_sub.py")


def ci_shards(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "COVERAGE_", "CI_SHARDS_"))}
    done = subprocess.run(
        [sys.executable, "-m", "ci_shards", *args], cwd=root, capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def measure(root: Path, files: Mapping[str, str]) -> Path:
    """``files`` committed on ``main`` of a new repository at ``root``, and the coverage map of a full base
    run (two shards), written next to the repository: ``root.parent / "cov" / "coverage.json"``."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write_gitignore(root)
    commit(root, files, "initial")
    out = root.parent
    plan = str(out / "plan.json")
    ci_shards(root, "plan", "--pytest", "--shards", "2", "--granularity", "file", "-o", plan)
    for index in (1, 2):
        ci_shards(root, "run", "--shard", f"{index}/2", "--plan", plan, "--pytest", "--coverage", "--out",
                  str(out / "shards"))  # fmt: skip
    ci_shards(root, "aggregate", "--plan", plan, str(out / "shards"), "--coverage-out", str(out / "cov"))
    return root


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project on ``main`` and its coverage map from a full base run."""
    root = tmp_path_factory.mktemp("narrow") / "repo"
    return measure(root, {p: textwrap.dedent(t) for p, t in PROJECT.items()})


def on_a_branch(root: Path) -> Iterator[Path]:
    """``root`` on a branch ``change`` off ``main`` for one test, back on ``main`` after it."""
    git(root, "checkout", "-q", "-B", "change", "main")
    yield root
    git(root, "checkout", "-q", "-f", "main")


@pytest.fixture
def repo(measured: Path) -> Iterator[Path]:
    yield from on_a_branch(measured)


def change(repo: Path, old: str, new: str, *, path: str = "src/pkg/calc.py") -> None:
    text = (repo / path).read_text(encoding="utf-8")
    assert old in text
    commit(repo, {path: text.replace(old, new, 1)})


def select(repo: Path, coverage: bool = True) -> Selection:
    artifact = str(repo.parent / "cov" / "coverage.json") if coverage else None
    return select_items(
        list(TESTS), cwd=repo, rootdir=None, env={}, settings=SelectionSettings(coverage=artifact), base="main"
    )


def test_the_map_records_lines_per_test_file_and_outside_any(measured: Path) -> None:
    entry = json.loads((measured.parent / "cov" / "coverage.json").read_text())["files"]["src/pkg/calc.py"]
    assert entry["test_files"]["tests/test_add.py"] == [5, 6]
    assert "tests/test_skipped.py" not in entry["test_files"]
    unattributed = entry["unattributed_lines"]
    assert 1 in unattributed and 4 in unattributed  # import time: the import, the def lines
    assert 23 in unattributed  # prepare()'s body: a session fixture's setup, for every later test file
    assert 6 not in unattributed


def test_a_change_inside_a_function_narrows_to_the_test_files_that_executed_it(repo: Path) -> None:
    change(repo, "total = a + b\n", "total = b + a\n")
    chosen = select(repo)
    # test_skipped has no context (skipped on the base): the map cannot vouch for it, so it stays
    assert set(chosen.selected) == {"tests/test_add.py", "tests/test_skipped.py"}
    reason = "coverage: did not execute `pkg.calc.add` on base"
    assert chosen.skipped == {"tests/test_scale.py": reason, "tests/test_sub.py": reason}
    assert any(line.startswith("coverage narrowed src/pkg/calc.py to 2 of 4") for line in chosen.lines)
    without = select(repo, coverage=False)  # the import map alone: every test file imports pkg.calc
    assert set(without.selected) == set(TESTS)


def test_two_hunks_in_two_functions_and_a_method(repo: Path) -> None:
    text = (repo / "src/pkg/calc.py").read_text()
    text = text.replace("return a - b", "return a - b  # sub").replace("return 7", "return 3 + 4")
    commit(repo, {"src/pkg/calc.py": text})
    chosen = select(repo)
    assert set(chosen.selected) == {"tests/test_scale.py", "tests/test_skipped.py", "tests/test_sub.py"}
    assert chosen.skipped["tests/test_add.py"] == (
        "coverage: did not execute `pkg.calc.Box.value`, `pkg.calc.sub` on base"
    )


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("LIMIT = 10", "LIMIT = 11", "a change at line 31 is outside any function body"),
        ("factor=2", "factor=3", "a change at line 13 is outside any function body"),
        ("@functools.lru_cache\n", "@functools.lru_cache(maxsize=4)\n", "outside any function body"),
        ('return {"one": 1}', 'return {"one": 1, "two": 2}', "`table` is cached"),
        ("LIMIT = 10\n", "LIMIT = 10\n\n\ndef new():\n    return 1\n", "after line 31 is outside any function body"),
        ("return 5", "return 6", "`pkg.calc.prepare` ran outside any test file on the base"),
    ],
    ids=["module-level", "default-argument", "decorator", "cached-body", "new-function", "session-fixture"],
)
def test_a_change_the_map_cannot_vouch_for_falls_back(repo: Path, old: str, new: str, why: str) -> None:
    change(repo, old, new)
    chosen = select(repo)
    assert set(chosen.selected) == set(TESTS)
    assert any(line.startswith("coverage cannot narrow src/pkg/calc.py:") and why in line for line in chosen.lines)


def test_a_stale_map_does_not_narrow(repo: Path) -> None:
    git(repo, "checkout", "-q", "main")
    change(repo, "LIMIT = 10", "LIMIT = 10  # main moved on after the map was made")
    git(repo, "checkout", "-q", "-B", "change", "main")
    change(repo, "total = a + b\n", "total = b + a\n")
    chosen = select(repo)
    assert set(chosen.selected) == set(TESTS)
    assert "coverage cannot narrow src/pkg/calc.py: the coverage map has no fresh entry for src/pkg/calc.py" in (
        chosen.lines
    )
    git(repo, "checkout", "-q", "main")
    git(repo, "reset", "-q", "--hard", "HEAD~1")


def test_a_map_without_lines_outside_tests_does_not_narrow(repo: Path, tmp_path: Path) -> None:
    data: Mapping[str, object] = json.loads((repo.parent / "cov" / "coverage.json").read_text())
    for entry in data["files"].values():  # type: ignore[attr-defined]
        entry.pop("unattributed_lines", None)  # an artifact written before the key existed
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    change(repo, "total = a + b\n", "total = b + a\n")
    chosen = select_items(
        list(TESTS), cwd=repo, rootdir=None, env={}, settings=SelectionSettings(coverage=str(old)), base="main"
    )
    assert set(chosen.selected) == set(TESTS)
    assert any("does not record the lines run outside tests" in line for line in chosen.lines)


def generated_project(seed: int) -> dict[str, str]:
    """A seeded project: functions calling later ones, tests calling a few each; one function is called
    only from a session fixture, one is cached, so the fall-back rules take part."""
    rng = random.Random(seed)
    count = 10
    lines = ["import functools\n"]
    for index in range(count):
        callees = sorted(rng.sample(range(index + 1, count), k=min(2, count - index - 1)))
        calls = " + ".join(f"f{c}(x)" for c in callees if rng.random() < 0.6) or "0"
        cached = "@functools.cache\n" if index == 7 else ""
        lines.append(f"\n\n{cached}def f{index}(x):\n    y = x + {index}\n    return y + {calls}\n")
    files = {"pytest.ini": "[pytest]\npythonpath = src\n", "src/gen/__init__.py": "", "src/gen/mod.py": "".join(lines)}
    files["tests/conftest.py"] = (
        "import pytest\nfrom gen import mod\n\n\n@pytest.fixture(scope='session')\ndef shared():\n"
        "    return mod.f9(1)\n"
    )
    base: dict[str, object] = {}
    exec(files["src/gen/mod.py"], base)
    for test in range(6):
        picked = sorted(rng.sample(range(count), k=2))
        expected = sum(base[f"f{i}"](1) for i in picked)  # type: ignore[operator]
        files[f"tests/test_t{test}.py"] = (
            f"from gen import mod\n\n\ndef test_it(shared):\n"
            f"    assert {' + '.join(f'mod.f{i}(1)' for i in picked)} == {expected} and shared == {base['f9'](1)}\n"  # type: ignore[operator]
        )
    return files


def failing_test_files(root: Path) -> set[str]:
    """The test files with a failing test (one pytest process)."""
    return {test.split("::")[0] for test in failing_tests(root)}


def failing_tests(root: Path) -> set[str]:
    """The ids of the tests that fail or error (one pytest process; "FAILED id" and "ERROR id" lines)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COVERAGE_", "CI_SHARDS_"))}
    # bytecode of its own: a change of the same size in the same second as the last run's leaves the source's
    # mtime and size as the cached .pyc records them, so Python would run the old module (with bytecode
    # writing on, the default, which .ci/run keeps)
    env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="pycache-", dir=root.parent)
    # the generated projects need no plugin: without the venv's (hypothesis, xdist…) each of the ~100 runs of the
    # slow set starts in 0.3 s of CPU rather than 0.5 s
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfE", "--tb=no", "-p", "no:cacheprovider", "-p", "no:ci_shards",
         "tests"],
        cwd=root, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    return {line.split()[1] for line in done.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))}


def test_no_miss_on_a_generated_project(tmp_path: Path) -> None:
    """Every function body of a generated project mutated in turn: every test file that fails is selected."""
    root = measure(tmp_path / "repo", generated_project(seed=3))
    tests = sorted(p.relative_to(root).as_posix() for p in (root / "tests").glob("test_*.py"))
    narrowed = killed = 0
    for index in range(10):
        git(root, "checkout", "-q", "-B", "change", "main")
        text = (root / "src/gen/mod.py").read_text()
        commit(root, {"src/gen/mod.py": text.replace(f"y = x + {index}\n", f"y = x + {index} + 1\n", 1)})
        chosen = select_items(
            tests, cwd=root, rootdir=None, env={},
            settings=SelectionSettings(coverage=str(tmp_path / "cov" / "coverage.json")), base="main",
        )  # fmt: skip
        narrowed += any(line.startswith("coverage narrowed") for line in chosen.lines)
        failing = failing_test_files(root)
        killed += bool(failing)
        assert failing <= set(chosen.selected), (index, chosen.lines)
        git(root, "checkout", "-q", "-f", "main")
    assert narrowed >= 3 and killed >= 3  # not vacuous: changes were narrowed, and tests did fail
