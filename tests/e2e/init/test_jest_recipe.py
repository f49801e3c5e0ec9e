"""The plan and run steps of the workflow ``ci-shards init`` writes for a jest project, run as written (the
globs, the test command, its environment and its JUnit path read from the written file), with real jest and
jest-junit from npm (the project of tests/e2e/test_recipes.py): every planned file accounted, the failing test
named at its line.

Slow (npm install, real jest): ``.venv/bin/python -m pytest -m slow tests/e2e/init/test_jest_recipe.py``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e.init.test_init import steps, with_of

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def ci_shards(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_SHARDS_", "JEST_"))}
    return subprocess.run([sys.executable, "-m", "ci_shards", *args], cwd=cwd, env={**environ, **(env or {})},
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip


def test_the_jest_workflow_plans_runs_and_reports_every_file(jest_project: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "node_modules").symlink_to(jest_project / "node_modules")
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(jest_project / name, repo / name)
    shutil.copytree(jest_project / "src", repo / "src")  # a copy: init's walk does not follow links
    done = ci_shards("init", "--shards", "2", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "runner: jest" in done.stderr and "install: npm ci" in done.stderr
    workflow = yaml.safe_load((repo / ".github/workflows/tests.yml").read_text())
    plan_with = with_of(workflow, "plan", "plan")
    globs = [f"--glob={glob}" for glob in plan_with["glob"].split()]
    planned = ci_shards("plan", *globs, "--granularity", plan_with["granularity"], "--shards", "2",
                        "-o", "plan.json", cwd=repo)  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    run_step = next(s for s in steps(workflow, "test") if s.get("with", {}).get("command") == "run")
    env = {key: str(value) for key, value in run_step["env"].items()}
    command = shlex.split(run_step["with"]["test-command"])
    junit = run_step["with"]["junit"]
    shard = ["run", "--plan", "plan.json", "--junit", junit]
    codes = [ci_shards(*shard, "--shard", f"{i}/2", "--", *command, cwd=repo, env=env).returncode for i in (1, 2)]
    assert sorted(codes) == [0, 1]
    report = ci_shards("aggregate", "--plan", "plan.json", "ci-shards-results", "--summary", "s.md", cwd=repo)
    assert report.returncode == 1, report.stderr
    summary = (repo / "s.md").read_text()
    assert "never ran" not in summary and "unverified" not in summary, summary
    assert "`src/fail.test.js:3`" in summary
