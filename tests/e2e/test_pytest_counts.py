"""The counts of a sharded run are pytest's counts, and the timings it writes know every test pytest reported.

Small generated projects, real pytest, real shards through ``ci-shards local`` and ``aggregate`` (issue 26,
items 4 and 5): xfailed and xpassed are outcomes of their own, a planned file the command leaves out is a
note and no test, and a test skipped in the run whose timings plan the next one is no "new" test then.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

OUTCOMES = """
import pytest

def test_pass():
    pass

def test_fail():
    assert False

@pytest.mark.skip(reason="not here")
def test_skip():
    pass

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False

"""
XPASSES = """
import pytest

@pytest.mark.xfail(reason="fixed meanwhile")
def test_xpass():
    pass

@pytest.mark.xfail(reason="strict", strict=True)
def test_xpass_strict():
    pass
"""
OTHER = "def test_other():\n    pass\n"
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}


def _ci_shards(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "ci_shards", *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300, env=_env(), check=False)


def _project(root: Path) -> None:
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_outcomes.py").write_text(OUTCOMES)
    (root / "tests" / "test_xpasses.py").write_text(XPASSES)
    (root / "tests" / "test_other.py").write_text(OTHER)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')


def _pytest_counts(root: Path, args: list[str]) -> dict[str, int]:
    """Plain pytest's own summary line (``1 failed, 1 passed, 1 deselected, 1 xfailed ...``) as counts."""
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120, env=_env(), check=False)
    last = proc.stdout.strip().splitlines()[-1]
    counts = {word: 0 for word in ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "deselected")}
    for number, word in _PYTEST_COUNT.findall(last):
        counts["error" if word.startswith("error") else word] = int(number)
    return counts


def _verdict(root: Path, out: Path) -> dict[str, Any]:
    proc = _ci_shards("aggregate", "--plan", str(out / "plan.json"), "--format", "json", str(out), cwd=root)
    verdict: dict[str, Any] = json.loads(proc.stdout)
    return verdict


def _ran(totals: dict[str, Any]) -> dict[str, int]:
    return {k: totals[k] for k in ("passed", "failed", "skipped", "xfailed", "xpassed")} | {"error": totals["errors"]}


@pytest.mark.slow
def test_xfailed_and_xpassed_are_counted_as_pytest_counts_them(tmp_path: Path) -> None:
    root = tmp_path / "project"
    _project(root)
    expected = _pytest_counts(root, [])
    assert expected == {
        "passed": 2,
        "failed": 2,
        "error": 0,
        "skipped": 1,
        "xfailed": 1,
        "xpassed": 1,
        "deselected": 0,
    }  # the strict xpass is a failure, as pytest says
    out = tmp_path / "out"
    local = _ci_shards("local", "--shards", "2", "--out", str(out), "--pytest", cwd=root)
    assert local.returncode == 1, local.stderr
    assert "7 tests, 2 passed, 2 failed, 0 errors, 1 skipped, 1 xfailed, 1 xpassed" in local.stdout
    totals = _verdict(root, out)["totals"]
    assert _ran(totals) == {k: v for k, v in expected.items() if k != "deselected"}
    assert totals["tests"] == 7
    outcomes = [json.loads(p.read_text()) for p in sorted(out.glob("shard-*/outcome.json"))]
    assert [sum(o[k] for o in outcomes) for k in ("skipped", "xfailed", "xpassed")] == [1, 1, 1]


@pytest.mark.slow
def test_a_planned_file_the_command_leaves_out_is_a_note_not_a_test(tmp_path: Path) -> None:
    root = tmp_path / "project"
    _project(root)
    args = ["-k", "not test_other"]  # discovery plans tests/test_other.py, pytest deselects it
    expected = _pytest_counts(root, args)
    assert expected["deselected"] == 1
    out = tmp_path / "out"
    local = _ci_shards("local", "--discover", "--shards", "1", "--out", str(out), "--pytest", "--", *args, cwd=root)
    assert local.returncode == 1, local.stderr
    verdict = _verdict(root, out)
    assert _ran(verdict["totals"]) == {k: v for k, v in expected.items() if k != "deselected"}
    assert verdict["totals"]["tests"] == 6 and verdict["totals"]["left_out"] == 1
    assert any("tests/test_other.py" in n and "deselected" in n for n in verdict["notes"])


@pytest.mark.slow
def test_a_test_skipped_in_the_timed_run_is_planned_next_time_not_new(tmp_path: Path) -> None:
    root = tmp_path / "project"
    _project(root)
    out, timings = tmp_path / "first", tmp_path / "timings.json"
    first_args = ["--out", str(out), "--timings-out", str(timings), "--pytest"]
    first = _ci_shards("local", "--discover", "--shards", "2", *first_args, cwd=root)
    assert first.returncode == 1, first.stderr  # test_fail and the strict xpass
    recorded = json.loads(timings.read_text())["variants"][""]
    assert "tests/test_outcomes.py::test_skip" in recorded  # known, as pytest-split records it
    assert "tests/test_outcomes.py::test_xfail" in recorded  # an xfailed test ran: measured
    # test granularity: the plan names tests, so a test the timings do not know would be "new"
    second_out = tmp_path / "second"
    args = ["--granularity", "test", "--durations", str(timings), "--out", str(second_out)]
    second = _ci_shards("local", "--discover", "--shards", "2", *args, "--pytest", cwd=root)
    assert second.returncode == 1, second.stderr
    plan = json.loads((second_out / "plan.json").read_text())
    planned = [i for s in plan["shards"] for i in s["items"]]
    # by its id, or inside its whole file when balance put all the file's tests in one shard (the plan then names
    # the file: plan/discover.whole_files_as_items; which happens depends on the measured times)
    assert "tests/test_outcomes.py::test_skip" in planned or "tests/test_outcomes.py" in planned
    assert plan["unknown_items"] == 0  # every planned test has a timing: the skipped one is known, not new
    verdict = _verdict(root, second_out)
    assert verdict["accounting"]["unplanned"] == []
    assert "new since the plan" not in second.stdout + second.stderr
    assert verdict["totals"]["tests"] == 7


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["--pytest", "--discover"])
def test_collectors_pytest_skips_are_one_skipped_test_each_as_pytest_counts_them(tmp_path: Path, mode: str) -> None:
    # a module's pytest.importorskip and a folder's conftest that skips: plain pytest says "1 skipped" for each,
    # and its --junitxml writes each as a skipped testcase; ci-shards counted them as no test ("2 passed" where
    # pytest said "2 passed, 2 skipped"), and a --pytest plan, which never plans such a module, did not name it
    root = tmp_path / "project"
    (root / "tests" / "optional").mkdir(parents=True)
    (root / "tests" / "test_other.py").write_text(OTHER + "\ndef test_more():\n    pass\n")
    (root / "tests" / "test_numpy.py").write_text("import pytest\nnp = pytest.importorskip('no_numpy_here')\n" + OTHER)
    (root / "tests" / "optional" / "conftest.py").write_text("import pytest\npytest.importorskip('no_extra_here')\n")
    (root / "tests" / "optional" / "test_extra.py").write_text(OTHER)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    expected = _pytest_counts(root, [])
    assert (expected["passed"], expected["skipped"]) == (2, 2)
    out = tmp_path / "out"
    local = _ci_shards("local", mode, "--shards", "3", "--out", str(out), "--pytest", "--junit-out", "m.xml", cwd=root)
    assert local.returncode == 0, local.stdout + local.stderr
    assert "4 tests, 2 passed, 0 failed, 0 errors, 2 skipped" in local.stdout
    assert _ran(_verdict(root, out)["totals"]) == {k: v for k, v in expected.items() if k != "deselected"}
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--junitxml", "p.xml"],
        cwd=root, capture_output=True, text=True, timeout=120, env=_env(), check=False,
    )  # fmt: skip
    assert plain.returncode == 0, plain.stdout
    # the merged report holds what pytest's own holds: 4 testcases, 2 of them skipped
    elements = [(root / name).read_text() for name in ("p.xml", "m.xml")]
    assert [(text.count("<testcase "), text.count("<skipped")) for text in elements] == [(4, 2), (4, 2)]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["--pytest", "--discover"])
def test_a_module_skipped_as_a_doctest_module_and_a_test_module_is_two_skipped_tests(tmp_path: Path, mode: str) -> None:
    # --doctest-modules: pytest collects tests/test_numpy.py twice (DoctestModule and Module), each import skips,
    # "2 skipped" and two skipped testcases in its --junitxml; ci-shards said "1 skipped" (networkx 3.6.1 with numpy
    # only: 398 skipped, ci-shards 364; conformance run 12)
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    doc = 'def add(a, b):\n    """\n    >>> add(1, 2)\n    3\n    """\n    return a + b\n\n'
    (root / "tests" / "test_other.py").write_text(doc + OTHER)
    (root / "tests" / "test_numpy.py").write_text("import pytest\nnp = pytest.importorskip('no_numpy_here')\n" + OTHER)
    args = ["--doctest-modules", "tests"]
    expected = _pytest_counts(root, args)
    assert (expected["passed"], expected["skipped"]) == (2, 2)
    out = tmp_path / "out"
    local = _ci_shards(
        "local", mode, "--shards", "2", "--out", str(out), "--junit-out", "m.xml", "--pytest", "--", *args, cwd=root
    )
    assert local.returncode == 0, local.stdout + local.stderr
    assert "4 tests, 2 passed, 0 failed, 0 errors, 2 skipped" in local.stdout
    assert _ran(_verdict(root, out)["totals"]) == {k: v for k, v in expected.items() if k != "deselected"}
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--junitxml", "p.xml", *args],
        cwd=root, capture_output=True, text=True, timeout=120, env=_env(), check=False,
    )  # fmt: skip
    assert plain.returncode == 0, plain.stdout
    # pytest's --junitxml counts both (tests="4" skipped="2") but writes them as one testcase holding two <skipped>
    # (its reporter is per node id); the merged report has a testcase for each, the same counts
    own, merged = ((root / name).read_text() for name in ("p.xml", "m.xml"))
    assert ('skipped="2" tests="4"' in own, own.count("<skipped")) == (True, 2)
    assert ('<testsuites name="ci-shards" tests="4"' in merged, merged.count("<skipped")) == (True, 2)


@pytest.mark.slow
def test_a_module_that_skips_in_a_report_the_command_writes_is_the_planned_files_skipped_test(tmp_path: Path) -> None:
    # pytest's own --junitxml names the module that skipped "tests.test_numpy" (classname ""): the shard said
    # the planned tests/test_numpy.py was never reported and failed, where plain pytest says "2 passed, 1 skipped"
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_other.py").write_text(OTHER + "\ndef test_more():\n    pass\n")
    (root / "tests" / "test_numpy.py").write_text("import pytest\nnp = pytest.importorskip('no_numpy_here')\n" + OTHER)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    plain = _pytest_counts(root, [])
    assert (plain["passed"], plain["skipped"]) == (2, 1)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--junitxml={junit}", "{items}"]
    local = _ci_shards("local", "--discover", "--shards", "2", "--out", str(tmp_path / "out"), "--", *command, cwd=root)
    assert local.returncode == 0, local.stdout + local.stderr
    assert "3 tests, 2 passed, 0 failed, 0 errors, 1 skipped" in local.stdout
