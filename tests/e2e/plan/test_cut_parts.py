"""The node ids discovery may cut a file into (``static_count``'s parts) against real pytest collection.

Every part a file is offered as must be an id pytest collects (a planned id nothing answers is a
loud "not collected" in the shard), and cover exactly the cases the count gives it; a test no
part names must still run once, in the shard that owns its file. Checked on a file of the shapes
that are easy to get wrong (parametrize over literals, names and comprehensions, nested and
inherited classes, ``__test__ = False``, definitions under ``if``/``try``, duplicates, rebound
names, unittest cases) and on generated files, each collected by a real pytest.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_shards.junit import parse_junit
from ci_shards.model.matching import item_candidates
from ci_shards.plan.static_count import count_tests

pytestmark = [pytest.mark.e2e]

ADVERSARIAL = """
    import sys
    import unittest
    import pytest

    VERSIONS = ["1.0", "1.1", "2.0"]
    PAIRS = [(a, b) for i, a in enumerate(VERSIONS) for b in VERSIONS[i + 1:]]

    @pytest.mark.parametrize("x", VERSIONS)
    @pytest.mark.parametrize("y", [pytest.param(1, id="one"), 2])
    def test_stacked(x, y): pass

    @pytest.mark.parametrize(("a", "b"), PAIRS)
    def test_pairs(a, b): pass

    @pytest.mark.parametrize("v", [v for v in VERSIONS if v != "1.1"])
    def test_filtered(v): pass

    @pytest.mark.parametrize("x", [])
    def test_empty(x): pass

    def test_twice(): pass
    def test_twice(): pass

    if sys.version_info >= (3, 0):
        def test_conditional(): pass

    def test_rebound(): pass
    test_rebound = pytest.mark.skip(test_rebound)

    class Base:
        def test_base(self): pass

    class TestA(Base):
        def test_a(self): pass
        class TestNested:
            @pytest.mark.parametrize("n", range(3))
            def test_n(self, n): pass

    class TestB(TestA):
        pass

    class TestOff:
        __test__ = False
        def test_never(self): pass

    class TestOffChild(TestOff):
        def test_still_never(self): pass

    class TestInit:
        def __init__(self): pass
        def test_never(self): pass

    class Cases(unittest.TestCase):
        def test_one(self): pass
        def test_two(self): pass
    """


def _collected(root: Path) -> list[str]:
    argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"]
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 5), proc.stdout + proc.stderr
    return [line.strip() for line in proc.stdout.splitlines() if "::" in line]


def _write(root: Path, files: dict[str, str]) -> None:
    (root / "tests").mkdir()
    for name, text in files.items():
        (root / "tests" / name).write_text(textwrap.dedent(text))


def _check_parts(root: Path, files: dict[str, str]) -> None:
    """Every part is a collected id covering exactly its counted cases, no collected test is
    covered by two parts, and the file's count is pytest's."""
    _write(root, files)
    collected = _collected(root)
    assert len(collected) == len(set(collected))
    owners: dict[str, list[str]] = {}
    for name in files:
        count = count_tests((root / "tests" / name).read_bytes())
        for key, cases, _units in count.parts:
            item = f"tests/{name}::{key}"
            covered = [i for i in collected if item in item_candidates(i)]
            assert len(covered) == (cases if count.guessed == 0 else len(covered)) > 0, (item, covered)
            for test_id in covered:
                owners.setdefault(test_id, []).append(item)
        if count.guessed == 0:
            assert count.tests == sum(1 for i in collected if i.startswith(f"tests/{name}::")), name
    assert all(len(parts) == 1 for parts in owners.values()), owners


@pytest.mark.slow
def test_parts_of_an_adversarial_file_are_what_pytest_collects(tmp_path: Path) -> None:
    _check_parts(tmp_path, {"test_shapes.py": ADVERSARIAL})
    count = count_tests((tmp_path / "tests" / "test_shapes.py").read_bytes())
    named = {key for key, _cases, _units in count.parts}
    assert "test_conditional" not in named and "test_rebound" not in named  # pytest collects them: owner runs them
    assert {"TestB::test_base", "TestB::TestNested::test_n", "Cases::test_one", "test_pairs"} <= named


@pytest.mark.slow
def test_a_file_balance_cuts_runs_every_test_once_the_unnamed_ones_by_its_owner(tmp_path: Path) -> None:
    # one file holds 90 of 104 tests: 3 shards cannot balance it whole, so discovery's plan cuts it
    big = ADVERSARIAL + "".join(
        f"\n    @pytest.mark.parametrize('n', range(9))\n    def test_big{n}(n): pass\n" for n in range(8)
    )
    small = "".join(f"def test_s{n}(): pass\n" for n in range(7))
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    _write(tmp_path, {"test_big.py": big, "test_s1.py": small, "test_s2.py": small})
    collected = _collected(tmp_path)
    out = tmp_path / "results"
    argv = [sys.executable, "-m", "ci_shards", "local", "--discover", "--shards", "3", "--out", str(out)]
    argv += ["--pytest", "--", "tests", "-p", "no:cacheprovider"]
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plan = json.loads((out / "plan.json").read_text())
    cut = [i for s in plan["shards"] for i in s["items"] if i.startswith("tests/test_big.py::")]
    assert len({s["index"] for s in plan["shards"] for i in s["items"] if i in cut}) >= 2, plan
    ran: list[str] = []
    for index in range(1, 4):
        ran += [c.test_id for c in parse_junit(out / f"shard-{index}-of-3" / "junit.xml")]
    assert sorted(ran) == sorted(collected)  # each once: test_conditional and test_rebound by the file's owner


def test_a_cut_file_that_fails_to_collect_is_its_parts_not_run_and_no_test_run_twice(tmp_path: Path) -> None:
    # the plan cut the file; then it broke (a yield in a test is a collection error of the module): each shard
    # holding a part collects it and reports the error, which the verdict read as one test run twice, and as a
    # test no item planned; then as one error a shard, and each part a test that never ran, where pytest says
    # "1 error"
    tests = "".join(f"def test_{n}(): pass\n" for n in range(6)) + "def test_yield():\n    yield 1\n"
    _write(tmp_path, {"test_broken.py": tests})
    timings = tmp_path / "timings.json"
    timings.write_text(json.dumps({f"tests/test_broken.py::test_{n}": 1.0 for n in range(6)}))
    out = tmp_path / "results"
    argv = [sys.executable, "-m", "ci_shards", "local", "--discover", "--shards", "2", "--durations", str(timings)]
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    argv += ["--out", str(out), "--pytest", "--", "tests"]
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    shards = [s["items"] for s in json.loads((out / "plan.json").read_text())["shards"]]
    assert all(i.startswith("tests/test_broken.py::") for s in shards for i in s) and all(shards), shards
    assert "more than once" not in proc.stdout and "not planned" not in proc.stdout, proc.stdout
    # pytest's count (--continue-on-collection-errors: "1 error"): the error once, each part left out saying why
    assert "(1 test, 0 passed, 0 failed, 1 error, 0 skipped)" in proc.stdout, proc.stdout
    cause = "not collected: tests/test_broken.py failed to collect"
    assert re.search(rf"not a test: tests/test_broken\.py::test_\d — {cause}", proc.stdout), proc.stdout
    assert "never ran" not in proc.stdout, proc.stdout
    # the error itself, once per shard that collected the file, each line saying which
    assert "tests/test_broken.py (shard 1) — collection failure" in proc.stdout, proc.stdout
    assert "tests/test_broken.py (shard 2) — collection failure" in proc.stdout, proc.stdout


def test_a_cut_file_that_skips_at_collection_is_one_skipped_test_and_no_unplanned_one(tmp_path: Path) -> None:
    # timings recorded where the module could be imported cut the file; here it skips at import (pytest: "1 passed,
    # 1 skipped"), and the owner's collector skip was listed as a test no item planned
    skips = 'import pytest\npytest.importorskip("no_such_module_here")\n'
    tests = "".join(f"def test_{n}(): pass\n" for n in range(6))
    _write(tmp_path, {"test_skips.py": skips + tests, "test_ok.py": "def test_ok(): pass\n"})
    timings = tmp_path / "timings.json"
    timings.write_text(json.dumps({f"tests/test_skips.py::test_{n}": 1.0 for n in range(6)}))
    out = tmp_path / "results"
    argv = [sys.executable, "-m", "ci_shards", "local", "--discover", "--shards", "2", "--durations", str(timings)]
    argv += ["--out", str(out), "--pytest", "--", "tests"]
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shards = [s["items"] for s in json.loads((out / "plan.json").read_text())["shards"]]
    assert sum(any(i.startswith("tests/test_skips.py::") for i in s) for s in shards) == 2, shards
    assert "2 tests, 1 passed, 0 failed, 0 errors, 1 skipped" in proc.stdout, proc.stdout
    assert "not planned" not in proc.stdout and "more than once" not in proc.stdout, proc.stdout


# generated test files: functions and classes in the shapes above, drawn at random
_name = st.text("abcxyz", min_size=1, max_size=4)
_values = st.lists(st.integers(0, 9), max_size=4).map(repr)


@st.composite
def _function(draw: st.DrawFn, indent: str = "", method: bool = False) -> str:
    name = "test_" + draw(_name)
    lines: list[str] = []
    args: list[str] = ["self"] if method else []
    for n in range(draw(st.integers(0, 2))):
        shape = draw(st.sampled_from(["{v}", "[x + 1 for x in {v}]", "list(range(len({v})))", "NAMES"]))
        lines.append(f"@pytest.mark.parametrize('p{n}', {shape.format(v=draw(_values))})")
        args.append(f"p{n}")
    lines.append(f"def {name}({', '.join(args)}): pass")
    return "".join(f"{indent}{line}\n" for line in lines)


@st.composite
def _test_file(draw: st.DrawFn) -> str:
    text = "import pytest\nNAMES = ['a', 'b', 'c']\n"
    classes: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["function", "class", "class", "conditional"]))
        if kind == "function":
            text += draw(_function())
        elif kind == "conditional":
            text += "if len(NAMES) > 1:\n" + draw(_function(indent="    "))
        else:
            name = draw(st.sampled_from(["Test", "Helper"])) + draw(_name).capitalize()
            base = f"({draw(st.sampled_from(classes))})" if classes and draw(st.booleans()) else ""
            text += f"class {name}{base}:\n"
            text += "    __test__ = False\n" if draw(st.integers(0, 5)) == 0 else ""
            text += "".join(draw(st.lists(_function(indent="    ", method=True), min_size=1, max_size=3)))
            classes.append(name)
    return text


def _generated(files: list[str], tmp_path_factory: pytest.TempPathFactory) -> None:
    _check_parts(tmp_path_factory.mktemp("gen"), {f"test_g{n}.py": text for n, text in enumerate(files)})


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(_test_file(), min_size=1, max_size=3))
def test_parts_of_generated_files_are_what_pytest_collects(
    files: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    _generated(files, tmp_path_factory)
