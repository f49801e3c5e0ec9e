"""Tests that depend on one another (pytest-dependency, installed), sharded for real: each runs, none is skipped.

pytest-dependency skips a test whose dependency did not pass earlier in the same session. A plan that cut its file
apart put ``test_b`` in a shard without ``test_a``: "2 passed, 2 skipped" under a green verdict, where plain pytest
said "4 passed".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.plan.test_dependencies import MARKED

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# the unit tests' module (test_a, and test_b depending on it), and a class whose tests depend on test_a
DEPENDENT = (
    MARKED.decode()
    + """
class TestC:
    @pytest.mark.dependency(depends=["test_a"])
    def test_c(self):
        pass

    @pytest.mark.dependency(depends=["test_a", "TestC::test_c"])
    def test_d(self):
        pass
"""
)


def _output(root: Path, *argv: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    proc = subprocess.run(
        [sys.executable, *argv], cwd=root, capture_output=True, text=True, timeout=180, env=env, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("mode", ["--pytest", "--discover"])
def test_dependent_tests_all_run_in_every_plan_mode_with_timings_that_would_cut_their_file(
    tmp_path: Path, mode: str
) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_dep.py").write_text(DEPENDENT)
    ids = ["test_a", "test_b", "TestC::test_c", "TestC::test_d"]
    (tmp_path / "durations.json").write_text(json.dumps({f"tests/test_dep.py::{i}": 5.0 for i in ids}))
    assert " 4 passed in " in _output(tmp_path, "-m", "pytest", "-p", "no:cacheprovider")
    verdict = _output(
        tmp_path, "-m", "ci_shards", "local", mode, "--shards", "2", "--durations", "durations.json", "--pytest", "--"
    )
    assert "ci-shards: PASSED: 4 tests, 4 passed, 0 failed, 0 errors, 0 skipped" in verdict, verdict


def test_a_dependency_on_another_files_test_that_ran_on_another_shard_fails_the_verdict_naming_it(
    tmp_path: Path,
) -> None:
    # scope 'session' names another file's test; the plan may put the two files apart, and then the dependent test
    # is skipped where plain pytest runs it: the run must not pass silently with a test that never ran
    (tmp_path / "tests").mkdir()
    marked_a = "import pytest\n\n@pytest.mark.dependency()\ndef test_a():\n    pass\n"
    (tmp_path / "tests" / "test_a.py").write_text(marked_a)
    (tmp_path / "tests" / "test_b.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.dependency(depends=['tests/test_a.py::test_a'], scope='session')\ndef test_b():\n    pass\n"
    )
    assert " 2 passed in " in _output(tmp_path, "-m", "pytest", "-p", "no:cacheprovider", "tests")
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    argv = [sys.executable, "-m", "ci_shards", "local", "--discover", "--shards", "2", "--pytest", "--", "tests"]
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=180, env=env, check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1, said
    assert "1 test skipped by pytest-dependency because the test it depends on passed on another shard" in said
    assert "tests/test_b.py::test_b (shard 2) — it depends on tests/test_a.py::test_a, which passed on shard 1" in said
