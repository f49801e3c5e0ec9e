"""A shard whose pytest ends its session early (-x in the project's addopts, ``pytest.exit()`` in a test,
pytest-xdist stopping at --maxfail, a hook's INTERNALERROR), or whose process dies inside a test (``os._exit``),
says why its planned tests never ran: in the shard's reason, in each never-run test's message, and, for -x, where
the option came from and the flag that runs every test. Before, the reason guessed "not collected, deleted,
renamed or crashed". Real pytest, real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from ci_shards.model.plan import Granularity, Plan, ShardPlan

pytestmark = pytest.mark.e2e

FAILS_FIRST = "def test_a():\n    assert False\n\n\ndef test_b():\n    pass\n"
EXITS = "import pytest\n\n\ndef test_a():\n    pytest.exit('database gone, giving up')\n\n\ndef test_b():\n    pass\n"
OTHER = "def test_c():\n    pass\n"


def _project(root: Path, first: str, ini: str = "") -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_one.py").write_text(first, encoding="utf-8")
    (root / "tests" / "test_two.py").write_text(OTHER, encoding="utf-8")
    (root / "pytest.ini").write_text(f"[pytest]\n{ini}", encoding="utf-8")
    return root


def _ci_shards(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "CI", "PYTEST_ADDOPTS")},
        **(env or {}),
    }
    argv = [sys.executable, "-m", "ci_shards", *args]
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False, timeout=120)


def _plan_and_run(root: Path, *pytest_args: str, workers: int = 1) -> dict[str, str]:
    """Run the project's tests as one shard of a plan written here (the plan stage is not what is tested);
    each test's message in junit.xml by its name ("" for a pass)."""
    items = [f"tests/{f.name}::{t}" for f in sorted((root / "tests").glob("test_*.py")) for t in _tests_in(f)]
    shard = ShardPlan(index=1, items=tuple(items), estimated_seconds=1.0)
    plan = Plan(total=1, granularity=Granularity.TEST, shards=(shard,), lower_bound_seconds=1.0, unknown_items=0)
    (root / "plan.json").write_text((replace(plan, workers=workers) if workers > 1 else plan).dumps())
    argv = ["run", "--plan", "plan.json", "--shard", "1/1", "--pytest", "--no-live", "--out", "out"]
    ran = _ci_shards(root, *argv, *(["--", *pytest_args] if pytest_args else []))
    assert ran.returncode in (0, 1), ran.stderr
    messages = {}
    for case in ET.parse(root / "out/shard-1-of-1/junit.xml").iter("testcase"):
        problem = next(iter(case), None)
        messages[str(case.get("name"))] = "" if problem is None else problem.get("message", "")
    return messages


def _tests_in(path: Path) -> list[str]:
    return [line[4:].split("(")[0] for line in path.read_text().splitlines() if line.startswith("def test_")]


def _reason(root: Path) -> str:
    """What aggregate says of the shard: its terminal verdict, then its GitHub annotations."""
    (root / "summary.md").touch()
    env = {"GITHUB_STEP_SUMMARY": str(root / "summary.md")}
    ran = _ci_shards(root, "aggregate", "--plan", "plan.json", "out", "--github", env=env)
    assert ran.returncode == 1, ran.stderr
    return ran.stderr + ran.stdout


@pytest.mark.slow  # three processes: the fast set keeps the two single-run cases below
def test_exitfirst_in_addopts_names_the_option_its_file_and_the_flag_that_runs_every_test(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", FAILS_FIRST, "addopts = -x\n")
    messages = _plan_and_run(root)
    assert messages["test_a"] == "assert False"
    stop = "stopping after 1 failures, by -x/--maxfail=1 from addopts in pytest.ini: pass --maxfail=0 to run every test"
    assert messages["test_b"] == messages["test_c"] == f"not run: pytest ended the session early ({stop})"
    said = _reason(root)
    assert f"planned tests that never ran (2) — not run: pytest ended the session early ({stop}):" in said
    # one annotation for the never-run tests, with their shared cause
    assert "::error title=2 planned items never ran (shard 1)::not run: pytest ended the session early (" in said
    # the advice holds: the same shard with --maxfail=0 after the project's addopts runs every test once
    again = _plan_and_run(_project(tmp_path / "q", FAILS_FIRST, "addopts = -x\n"), "--maxfail=0")
    assert again == {
        "test_a": "assert False",
        "test_b": "",
        "test_c": "",
    }


@pytest.mark.slow  # three processes: the fast set keeps the two single-run cases below
def test_pytest_exit_in_a_test_is_the_shards_reason_and_that_test_is_named_running(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", EXITS)
    messages = _plan_and_run(root)
    ended = "pytest ended the session early (pytest.exit('database gone, giving up') was called)"
    assert messages == {"test_a": f"was running: {ended}", "test_b": f"not run: {ended}", "test_c": f"not run: {ended}"}
    terminal = _reason(root)
    assert (
        "pytest ended the session early (pytest.exit('database gone, giving up') was called); 3 planned items were"
        " never reported, in 2 files, first: tests/test_one.py::test_a"
    ) in terminal
    assert "zero tests executed" not in terminal and "report shows no failure" not in terminal
    # two causes among the never-run tests: each id carries its own
    assert (
        f"  tests/test_one.py::test_a — was running: {ended}\n  tests/test_one.py::test_b — not run: {ended}"
        in terminal
    )


def test_a_process_that_dies_inside_a_test_names_that_test_and_its_exit(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "import os\n\n\ndef test_a():\n    os._exit(3)\n\n\ndef test_b():\n    pass\n")
    messages = _plan_and_run(root)
    died = "the test process died inside tests/test_one.py::test_a (exit code 3, before pytest's session ended)"
    assert messages == {"test_a": f"was running: {died}", "test_b": f"not run: {died}", "test_c": f"not run: {died}"}
    assert f"1/1: {died}; 3 planned items were never reported" in _reason(root)


def test_a_hook_that_raises_is_pytests_internal_error_named_in_the_reason(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    (root / "tests" / "conftest.py").write_text(
        "def pytest_runtest_makereport(item, call):\n"
        "    if item.name == 'test_b' and call.when == 'call':\n"
        "        raise RuntimeError('hook exploded')\n"
    )
    messages = _plan_and_run(root)
    ended = "pytest ended the session early (INTERNALERROR: RuntimeError: hook exploded)"
    assert messages == {"test_a": "", "test_b": f"was running: {ended}", "test_c": f"not run: {ended}"}


@pytest.mark.slow
def test_xdist_stopping_at_maxfail_is_named_too(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    root = _project(tmp_path / "p", FAILS_FIRST + "\n\ndef test_z():\n    assert False\n", "addopts = --maxfail=1\n")
    messages = _plan_and_run(root, workers=2)
    never = [m for m in messages.values() if m.startswith("not run: pytest ended the session early")]
    assert never, messages  # two workers both take a test before the controller stops: which ones is theirs
    assert all("stopping after 1 failures, by -x/--maxfail=1 from addopts in pytest.ini" in m for m in never)
    assert len(messages) == 4  # every planned test once: run, or not run with the cause


EXITS_IN_TEARDOWN = """import pytest


@pytest.fixture
def bye():
    yield
    pytest.exit('bye from teardown')


def test_a(bye):
    pass


def test_b():
    pass
"""


@pytest.mark.parametrize(
    ("first", "pytest_args", "counted", "after"),
    [
        # a fixture's teardown calls pytest.exit(): plain pytest says "1 passed" (test_a's call), exit 2
        (EXITS_IN_TEARDOWN, (), {"test_a": ""}, "pytest.exit('bye from teardown') was called after "),
        # --pdb quits its post-mortem (stdin closed) after test_a failed: plain pytest says "1 failed"
        (FAILS_FIRST, ("--pdb",), {"test_a": "assert False"}, "pytest.exit('Quitting debugger') was called after "),
    ],
    ids=["exit-in-teardown", "pdb-quits"],
)
@pytest.mark.slow  # 1.3-1.5 s each
def test_pytest_exit_after_a_tests_call_counts_that_test_as_pytest_does(
    tmp_path: Path, first: str, pytest_args: tuple[str, ...], counted: dict[str, str], after: str
) -> None:
    # before: the test whose call had reported was "was running" and an error, where pytest counts its call
    root = _project(tmp_path / "p", first)
    messages = _plan_and_run(root, *pytest_args)
    ended = f"pytest ended the session early ({after}tests/test_one.py::test_a's call, before its teardown ended)"
    assert messages == {**counted, "test_b": f"not run: {ended}", "test_c": f"not run: {ended}"}
