"""A test pytest reports more than once, through real shards: each stays one test, with pytest's own verdict on it,
its time measured once, and every failure it had kept.

Subtests (pytest 9's ``subtests`` fixture, unittest's ``subTest``): each test stays one test,
with pytest's own verdict on it, its time measured once, and every failed subtest named.

pytest reports each subtest apart (``SUBFAILED[check] (i=1) ...``) besides the test's own report. Before, the
plugin took a skipped subtest for the test's outcome (a passing test counted skipped, and a run of only such tests
failed "no tests ran"), added the subtests' time to the call's that already holds it (twice the time in the
timings), and kept only the first failed subtest's traceback. What pytest's summary line counts apart (``5
subtests passed``) is docs/rules.md's "Subtests".

A test whose call fails and whose teardown then fails too: pytest reports both (``1 failed, 1 error`` of one test);
the test is failed, and the teardown's traceback follows the call's in its failure (it used to be dropped).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,  # each runs plain pytest and real shards: 1.6-2.5 s
    pytest.mark.skipif(int(pytest.__version__.split(".")[0]) < 9, reason="the subtests fixture is pytest 9's"),
]

SUBTESTS = """
import time
import unittest

import pytest


def test_two_subtests_fail(subtests):
    for i in range(4):
        with subtests.test(msg="check", i=i):
            assert i % 2 == 0


def test_one_subtest_skips(subtests):
    with subtests.test(i=0):
        pytest.skip("not this one")
    with subtests.test(i=1):
        assert True


def test_timed_subtests(subtests):
    for i in range(4):
        with subtests.test(i=i):
            time.sleep(0.1)


class TestUnittest(unittest.TestCase):
    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                pass
"""
# pytest's own verdict on each test: the -rA lines of tests, not of subtests (those start SUBPASSED, SUBFAILED...)
_VERDICT_LINE = re.compile(r"^(PASSED|FAILED|SKIPPED|ERROR) (\S+::\S+)", re.M)
_OUTCOME = {"PASSED": "passed", "FAILED": "failed", "SKIPPED": "skipped", "ERROR": "error"}


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300, env=env, check=False)


def _plain_pytest(root: Path) -> tuple[dict[str, set[str]], dict[str, float]]:
    """({test id: pytest's verdicts on it}, {test name: the time pytest's --junitxml gives})."""
    proc = _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "--junitxml=plain.xml"], root)
    verdicts: dict[str, set[str]] = {}
    for word, test in _VERDICT_LINE.findall(proc.stdout):
        verdicts.setdefault(test, set()).add(_OUTCOME[word])
    seconds = {c.get("name", ""): float(c.get("time", "0")) for c in ET.parse(root / "plain.xml").iter("testcase")}
    return verdicts, seconds


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_test_with_subtests_is_one_test_with_pytests_verdict_and_time_and_every_failure(
    tmp_path: Path, workers: str
) -> None:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_subtests.py").write_text(SUBTESTS)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    verdicts, plain_seconds = _plain_pytest(root)
    assert verdicts == {
        "tests/test_subtests.py::test_two_subtests_fail": {"failed"},
        "tests/test_subtests.py::test_one_subtest_skips": {"passed"},
        "tests/test_subtests.py::test_timed_subtests": {"passed"},
        "tests/test_subtests.py::TestUnittest::test_sub": {"passed"},
    }

    argv = [sys.executable, "-m", "ci_shards", "local", "--shards", "1", "--workers", workers, "--pytest"]
    local = _run([*argv, "--out", "out", "--timings-out", "timings.json"], root)
    assert local.returncode == 1, local.stdout + local.stderr
    assert "4 tests, 3 passed, 1 failed, 0 errors, 0 skipped" in local.stdout, local.stdout

    records = [json.loads(line) for line in (root / "out" / "shard-1-of-1" / "failures.jsonl").read_text().splitlines()]
    failed = {r["test_id"]: r for r in records if r["kind"] == "failed"}
    assert list(failed) == ["tests/test_subtests.py::test_two_subtests_fail"]
    record = failed["tests/test_subtests.py::test_two_subtests_fail"]
    assert record["message"].startswith("[check] (i="), record["message"]
    assert "assert (1 % 2) == 0" in record["message"]
    assert "assert (1 % 2) == 0" in record["text"] and "assert (3 % 2) == 0" in record["text"], record["text"]

    timings = json.loads((root / "timings.json").read_text())["variants"][""]
    measured = timings["tests/test_subtests.py::test_timed_subtests"][0]
    # pytest's --junitxml adds the four 0.1 s subtests to the call that holds them (0.8 s); the test took 0.4 s
    assert 0.4 <= measured < 0.75 * plain_seconds["test_timed_subtests"], (measured, plain_seconds)


TEARDOWN = """
import pytest


@pytest.fixture
def breaks_on_teardown():
    yield
    raise RuntimeError("teardown broke")


def test_call_then_teardown_fail(breaks_on_teardown):
    assert False, "call broke"


def test_only_teardown_fails(breaks_on_teardown):
    pass
"""


def test_a_teardown_failure_after_a_failed_call_is_kept_in_the_tests_failure(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_teardown.py").write_text(TEARDOWN)
    verdicts, _ = _plain_pytest(root)
    # pytest's -rA has a line for the call and one for the teardown: "1 failed, 1 passed, 2 errors" of two tests
    assert verdicts == {
        "tests/test_teardown.py::test_call_then_teardown_fail": {"failed", "error"},
        "tests/test_teardown.py::test_only_teardown_fails": {"passed", "error"},
    }
    argv = [sys.executable, "-m", "ci_shards", "local", "--shards", "1", "--pytest", "--out", "out"]
    local = _run(argv, root)
    assert local.returncode == 1, local.stdout + local.stderr
    assert "2 tests, 0 passed, 1 failed, 1 error, 0 skipped" in local.stdout, local.stdout
    records = [json.loads(line) for line in (root / "out" / "shard-1-of-1" / "failures.jsonl").read_text().splitlines()]
    by_id = {r["test_id"]: r for r in records if r["kind"] in ("failed", "error")}
    both = by_id["tests/test_teardown.py::test_call_then_teardown_fail"]
    assert (both["kind"], both["message"]) == ("failed", "AssertionError: call broke"), both
    assert both["text"].index("call broke") < both["text"].index("failed on teardown: RuntimeError: teardown broke")
    alone = by_id["tests/test_teardown.py::test_only_teardown_fails"]
    assert (alone["kind"], alone["message"]) == ("error", "failed on teardown: RuntimeError: teardown broke"), alone
