"""The templates are found outside an editable install: the wheel and sdist ``python -m build`` makes hold
templates/, and the wheel installed in a fresh venv renders a job summary and writes a workflow.

Slow (a build and a pip install, about half a minute): ``.venv/bin/python -m pytest -m slow tests/e2e/test_wheel.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from ci_shards.model.outcome import CaseOutcome
from tests.e2e.gha.act_harness import export_project
from tests.unit.aggregate_fixtures import case_for, make_plan, write_shard

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
TEMPLATES = ("report/verdict.md.j2", "report/history.md.j2", "report/coverage.md.j2", "ci/github.yml.j2")


def test_a_built_wheel_in_a_fresh_venv_renders_a_summary_and_a_workflow(tmp_path: Path) -> None:
    project = export_project(tmp_path / "project")  # a copy: the build leaves nothing in the checkout
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(project)], check=True,
                   capture_output=True)  # fmt: skip
    wheel = next(dist.glob("*.whl"))
    sdist = next(dist.glob("*.tar.gz"))
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = set(archive.namelist())
    with tarfile.open(sdist) as archive:
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for template in TEMPLATES:
        assert f"ci_shards/templates/{template}" in in_wheel, sorted(in_wheel)
        assert f"templates/{template}" in in_sdist, sorted(in_sdist)

    venv = tmp_path / "venv"
    # a venv without pip of its own, the wheel installed into it by this pip (`pip --python`, pip >= 22.3):
    # the same fresh site-packages, without ensurepip's 5 CPU seconds of installing a pip nobody uses here
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", str(wheel)], check=True
    )
    plan = make_plan([["tests/test_a.py::test_x"], ["tests/test_b.py::test_y"]])
    work = tmp_path / "work"  # outside the checkout, so nothing can come from its templates/
    work.mkdir()
    (work / "plan.json").write_text(plan.dumps())
    write_shard(work / "results", plan, 1)
    write_shard(work / "results", plan, 2, [case_for("tests/test_b.py::test_y", CaseOutcome.FAILED)])
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"}}
    cli = str(venv / "bin" / "ci-shards")
    done = subprocess.run([cli, "aggregate", "--plan", "plan.json", "--summary", "summary.md", "results"], cwd=work,
                          env=env, capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 1, done.stderr
    summary = (work / "summary.md").read_text()
    assert "ci-shards: failed" in summary and "tests/test_b.py::test_y" in summary

    (work / "go.mod").write_text("module example.com/m\n\ngo 1.22\n")
    init = subprocess.run([cli, "init", "--dry-run"], cwd=work, env=env, capture_output=True, text=True, check=False)
    assert init.returncode == 0, init.stderr
    assert init.stdout.startswith("# Sharded `go test` with ci-shards")
    located = subprocess.run([str(venv / "bin" / "python"), "-c", "import ci_shards.templates as t; print(t.__file__)"],
                             cwd=work, env=env, capture_output=True, text=True, check=True)  # fmt: skip
    assert str(venv) in located.stdout  # the installed copy, not this checkout's
