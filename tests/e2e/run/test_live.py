"""`ci-shards run` streams output live in CI by default: each batch and re-run in its own
::group:: on GitHub, test output fenced so it cannot issue workflow commands; output.log stays."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.e2e.run.test_shard import _fenced, write_plan

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

FLAKY = """
import pathlib

def test_flaky():
    print("::error::pwned-by-test @octocat")
    marker = pathlib.Path(__file__).with_name("ran-once")
    if not marker.exists():
        marker.write_text("x")
        raise AssertionError("first try fails")

def test_steady():
    print("steady output")
"""


def _run(tmp_path: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    argv = [sys.executable, "-m", "ci_shards", "run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", *extra]
    return subprocess.run(
        [*argv, "--pytest", "--", "-s"],
        cwd=tmp_path,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _suite(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_live.py").write_text(textwrap.dedent(FLAKY))
    write_plan(tmp_path / "plan.json", [["tests/test_live.py::test_flaky", "tests/test_live.py::test_steady"]])


@pytest.mark.parametrize(("env", "live"), [({"CI": "true"}, True), ({}, False), ({"CI": "true"}, False)])
def test_ci_streams_live_by_default(tmp_path: Path, env: dict[str, str], live: bool) -> None:
    _suite(tmp_path)
    extra = () if live or not env else ("--no-live",)
    proc = _run(tmp_path, env, "--retries", "1", *extra)
    assert proc.returncode == 0, proc.stderr  # flaky: passed on the re-run
    assert ("steady output" in proc.stderr) == live
    assert "steady output" in (tmp_path / "out" / "shard-1-of-1" / "output.log").read_text()  # the spool stays


def test_github_folds_each_batch_and_rerun_and_fences_test_output(tmp_path: Path) -> None:
    _suite(tmp_path)
    proc = _run(tmp_path, {"GITHUB_ACTIONS": "true", "CI": "true"}, "--retries", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    groups = [line for line in lines if line.startswith("::group::")]
    assert groups[0] == "::group::ci-shards shard-1-of-1: run, batch 1/1, 2 items"  # no command: ids are untrusted
    assert groups[1] == "::group::ci-shards shard-1-of-1: re-run 1, batch 1/1, 1 item"
    first = lines.index(groups[0])
    assert "steady output" in "\n".join(lines[first : lines.index("::endgroup::", first)])
    assert _fenced(proc.stderr, "pwned-by-test")
