"""The plan and run steps of the workflow ``ci-shards init`` writes for a ``node --test`` project, run as written
(the globs and the test command read from the written file): two shards with node's test runner and the
reporter of examples/node, then an aggregate that accounts for every planned file and names the failing test.

Slow (real node processes): ``.venv/bin/python -m pytest -m slow tests/e2e/init/test_node_recipe.py``.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e.init.test_init import make, with_of

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
PROJECT = {
    "package.json": '{"name": "node-recipe", "private": true, "scripts": {"test": "node --test"}}\n',
    "package-lock.json": "{}\n",
    "test/sum.test.mjs": 'import test from "node:test";\nimport assert from "node:assert";\n'
    'test("adds", () => assert.equal(1 + 1, 2));\n',
    "test/fail.test.mjs": 'import test from "node:test";\nimport assert from "node:assert";\n'
    'test("breaks", () => assert.equal(1 + 1, 3));\n',
    "lib/deep/other.test.mjs": 'import test from "node:test";\ntest("works", () => {});\n',
}


def ci_shards(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ci_shards", *args], cwd=cwd, capture_output=True, text=True,
                          check=False)  # fmt: skip


def test_the_node_workflow_plans_runs_and_reports_every_file(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    repo = make(tmp_path, PROJECT)
    shutil.copy2(REPO / "examples" / "node" / "junit-reporter.mjs", repo / "junit-reporter.mjs")
    done = ci_shards("init", "--shards", "2", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "to do" not in (repo / ".github/workflows/tests.yml").read_text()  # the reporter is there
    workflow = yaml.safe_load((repo / ".github/workflows/tests.yml").read_text())
    plan_with = with_of(workflow, "plan", "plan")
    globs = [f"--glob={glob}" for glob in plan_with["glob"].split()]
    planned = ci_shards("plan", *globs, "--granularity", plan_with["granularity"], "--shards", "2",
                        "-o", "plan.json", cwd=repo)  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    assert sorted(item for s in json.loads((repo / "plan.json").read_text())["shards"] for item in s["items"]) == [
        "lib/deep/other.test.mjs", "test/fail.test.mjs", "test/sum.test.mjs"
    ]  # fmt: skip
    command = shlex.split(with_of(workflow, "test", "run")["test-command"])
    codes = [ci_shards("run", "--plan", "plan.json", "--shard", f"{i}/2", "--", *command, cwd=repo) for i in (1, 2)]
    assert sorted(c.returncode for c in codes) == [0, 1], [c.stderr[-2000:] for c in codes]
    report = ci_shards("aggregate", "--plan", "plan.json", "ci-shards-results", "--summary", "s.md", cwd=repo)
    assert report.returncode == 1, report.stderr
    summary = (repo / "s.md").read_text()
    assert "never ran" not in summary and "unverified" not in summary, summary
    assert "breaks" in summary and "test/fail.test.mjs" in summary
