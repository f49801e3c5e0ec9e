"""The action's install in the runner's tool cache (src/ci_shards/gha/bootstrap.py, docs/github-actions.md
"Installation"), run for real: action.yml's "Check the inputs" and "Install ci-shards" steps with bash, pip
installing from the act tests' wheelhouse.

A second job on the same runner reuses the venv; a job with the input python uses the same venv and leaves that
Python as the project installed it (coverage.py aside, added when a shard measures coverage there); an action
whose sources changed, its version unchanged, gets a venv of its own, so no job ever runs stale code.
"""

from __future__ import annotations

import shutil
import subprocess
import venv
from pathlib import Path

import pip
import pytest

from tests.e2e.gha.act_harness import export_project
from tests.e2e.gha.test_action_scripts import run_step

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def outputs(cwd: Path) -> dict[str, str]:
    lines = (cwd / "output.txt").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def step(name: str, job: Path, inputs: dict[str, str], runner: dict[str, str]) -> dict[str, str]:
    """One step in a job folder of its own (a fresh RUNNER_TEMP, as each job gets), returning its outputs."""
    job.mkdir(parents=True, exist_ok=True)
    (job / "output.txt").write_text("")
    done = run_step(name, job, inputs, runner, timeout=600)  # an install builds a wheel and a venv: minutes at load 20
    assert done.returncode == 0, done.stdout + done.stderr
    return outputs(job)


def stamp(python: str) -> str:
    probe = "import ci_shards; print(getattr(ci_shards, 'STAMP', 'none'))"
    return subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()


def importable(python: str) -> dict[str, bool]:
    """Which of ci-shards' own package, two of its dependencies and coverage.py ``python`` can import."""
    names = ("ci_shards", "yaml", "requests", "coverage")
    probe = f"import importlib.util as u; print(' '.join(str(int(u.find_spec(n) is not None)) for n in {names!r}))"
    found = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    return {name: flag == "1" for name, flag in zip(names, found, strict=True)}


def users_python(folder: Path) -> str:
    """A Python that keeps what jobs install into it, as setup-python's does on a self-hosted runner: a venv with
    this interpreter's pip copied in (what the setup-python stand-in does; ensurepip would cost seconds)."""
    venv.create(folder, with_pip=False)
    python = folder / "bin" / "python"
    purelib = [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    site = subprocess.run(purelib, capture_output=True, text=True, check=True).stdout.strip()
    shutil.copytree(Path(pip.__file__).parent, Path(site) / "pip")
    return str(python)


def test_a_job_reuses_the_install_and_a_changed_action_never_does(wheels: Path, tmp_path: Path) -> None:
    action = export_project(tmp_path / "action")
    python = users_python(tmp_path / "users-python")
    runner = {
        "RUNNER_TOOL_CACHE": str(tmp_path / "tool-cache"),
        "GITHUB_ACTION_PATH": str(action),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_CACHE_DIR": str(wheels.parent / "pip-cache"),
    }
    plan, run = {"command": "plan"}, {"command": "run", "python": python}

    first = step("Check the inputs", tmp_path / "job1", plan, runner)
    assert first["ready"] == "false" and Path(first["venv"]).parent.parent == tmp_path / "tool-cache" / "ci-shards"
    installed = step("Install ci-shards", tmp_path / "job1", plan, runner)
    assert stamp(installed["python"]) == "none"
    left = Path(first["venv"]) / "left-by-job-1"
    left.write_text("")

    # Job 2, same runner, same action: ready, so the cache restore is skipped, and the venv is the same one.
    second = step("Check the inputs", tmp_path / "job2", plan, runner)
    assert second == {**first, "ready": "true"}
    assert step("Install ci-shards", tmp_path / "job2", plan, runner)["python"] == installed["python"]
    assert left.is_file()
    # A job with the input python runs ci-shards from the same venv; nothing of it enters the tests' Python.
    assert step("Install ci-shards", tmp_path / "job3", run, runner)["python"] == installed["python"]
    assert importable(python) == {"ci_shards": False, "yaml": False, "requests": False, "coverage": False}
    assert len(list((tmp_path / "tool-cache" / "ci-shards").glob("*/wheel/*.whl"))) == 1
    # coverage: true measures the tests where they run: coverage.py alone goes there
    measured = step("Install ci-shards", tmp_path / "job3c", {**run, "coverage": "true"}, runner)
    assert measured["python"] != installed["python"]  # the venv with the coverage extra
    assert importable(python) == {"ci_shards": False, "yaml": False, "requests": False, "coverage": True}

    # The action changes, its version does not: a venv of its own with the new code, the old one as it was.
    init = action / "src" / "ci_shards" / "__init__.py"
    init.write_text(init.read_text() + 'STAMP = "changed"\n')
    changed = step("Check the inputs", tmp_path / "job4", plan, runner)
    assert changed["ready"] == "false" and changed["venv"] != first["venv"] and changed["key"] != first["key"]
    assert stamp(step("Install ci-shards", tmp_path / "job4", plan, runner)["python"]) == "changed"
    assert stamp(installed["python"]) == "none"
    assert stamp(step("Install ci-shards", tmp_path / "job5", run, runner)["python"]) == "changed"
