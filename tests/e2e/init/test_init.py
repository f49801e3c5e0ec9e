"""``ci-shards init`` as a user runs it, a real process in generated repositories of each kind: a src-layout
package with a test extra, a flat project with requirements-dev.txt, a Node project with jest, a go module.
Each writes its workflow, says what it found, and the workflow passes check-jsonschema; an existing file is
refused (exit 2, one line) unless --force; --dry-run writes nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.gha.test_action_yml import schema_check

pytestmark = pytest.mark.e2e

SRC_LAYOUT = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1"\nrequires-python = ">=3.10,<3.13"\n'
    '[project.optional-dependencies]\ntest = ["pytest>=8"]\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    "src/calc/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
FLAT = {
    "requirements-dev.txt": "pytest>=8\n",
    "pytest.ini": "[pytest]\ntestpaths = checks\n",
    ".python-version": "3.11.9\n",
    "checks/test_flat.py": "def test_flat():\n    assert True\n",
}
JEST = {
    "package.json": '{"name": "web", "scripts": {"test": "jest"},'
    ' "devDependencies": {"jest": "^29", "jest-junit": "^16"}}\n',
    "package-lock.json": "{}\n",
    "src/sum.test.js": "test('sum', () => expect(1 + 1).toBe(2));\n",
    "lib/__tests__/util.js": "test('util', () => {});\n",
    "node_modules/dep/x.test.js": "",  # never a test of the project
}
GO = {"go.mod": "module example.com/m\n\ngo 1.22\n", "m_test.go": "package m\n"}
WORKFLOW = ".github/workflows/tests.yml"


def make(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def init(repo: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ci_shards", "init", *flags], cwd=repo, capture_output=True, text=True, check=False
    )


def steps(workflow: dict[Any, Any], job: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = workflow["jobs"][job]["steps"]
    return found


def with_of(workflow: dict[Any, Any], job: str, command: str) -> dict[str, Any]:
    found: dict[str, Any] = next(s["with"] for s in steps(workflow, job) if s.get("with", {}).get("command") == command)
    return found


def written(repo: Path, path: str = WORKFLOW) -> dict[Any, Any]:
    code, output = schema_check("vendor.gitlab-ci" if path.endswith("gitlab-ci.yml") else "vendor.github-workflows",
                                repo / path)  # fmt: skip
    assert code == 0, output
    data: dict[Any, Any] = yaml.safe_load((repo / path).read_text())
    return data


def test_src_layout_package_with_a_test_extra(tmp_path: Path) -> None:
    repo = make(tmp_path, SRC_LAYOUT)
    done = init(repo)
    assert done.returncode == 0, done.stderr
    assert "runner: pytest (pytest settings in pyproject.toml)" in done.stderr
    assert "python: 3.12 (the newest that requires-python >=3.10,<3.13 allows)" in done.stderr
    assert f"wrote {WORKFLOW}" in done.stderr
    workflow = written(repo)
    runs = [s["run"] for s in steps(workflow, "test") if "run" in s]
    assert runs == ["python -m pip install -e '.[test]'"]
    setup = next(s for s in steps(workflow, "test") if "setup-python" in s.get("uses", ""))
    assert setup["with"]["python-version"] == "3.12"
    assert with_of(workflow, "plan", "plan")["pytest-args"] == "tests"
    assert with_of(workflow, "plan", "plan")["shards"] == 4


def test_flat_project_with_requirements_dev(tmp_path: Path) -> None:
    repo = make(tmp_path, FLAT)
    done = init(repo, "--shards", "3", "--coverage", "--select", "changed")
    assert done.returncode == 0, done.stderr
    workflow = written(repo)
    assert [s["run"] for s in steps(workflow, "test") if "run" in s] == [
        "python -m pip install -r requirements-dev.txt"
    ]
    assert "python: 3.11 (.python-version says 3.11.9)" in done.stderr
    plan = with_of(workflow, "plan", "plan")
    assert (plan["pytest-args"], plan["shards"], plan["select"]) == ("checks", 3, "changed")
    assert steps(workflow, "plan")[0]["with"]["fetch-depth"] == 0  # the diff needs the history
    assert with_of(workflow, "test", "run")["coverage"] is True
    assert with_of(workflow, "report", "aggregate")["coverage"] is True


def test_addopts_that_fail_per_shard_are_warned_and_left_as_to_dos(tmp_path: Path) -> None:
    repo = make(tmp_path, {**FLAT, "pytest.ini": "[pytest]\ntestpaths = checks\naddopts = -x --cov-fail-under=99\n"})
    done = init(repo)
    assert done.returncode == 0, done.stderr
    header = [line for line in (repo / WORKFLOW).read_text().splitlines() if line.startswith("#   to do: addopts")]
    assert len(header) == 2
    assert header[0].startswith("#   to do: addopts in pytest.ini stop pytest after failures (-x): ")
    assert header[1].startswith("#   to do: addopts in pytest.ini gate coverage at 99% (--cov-fail-under): ")
    assert done.stderr.count("warning: addopts in pytest.ini") == 2


def test_workers_are_planned_and_run_and_the_workflow_stays_valid(tmp_path: Path) -> None:
    repo = make(tmp_path, FLAT)
    done = init(repo, "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert "workers: 2 (--workers: pytest-xdist in each shard, planned for them)" in done.stderr
    workflow = written(repo)  # check-jsonschema: the action's inputs and the workflow schema
    assert (with_of(workflow, "plan", "plan")["workers"], with_of(workflow, "test", "run")["workers"]) == ("2", "2")


def test_node_project_with_jest(tmp_path: Path) -> None:
    repo = make(tmp_path, JEST)
    done = init(repo, "--shards", "auto", "--comment-workflow")
    assert done.returncode == 0, done.stderr
    assert "runner: jest (jest in package.json)" in done.stderr
    workflow = written(repo)
    plan = with_of(workflow, "plan", "plan")
    assert plan["glob"].split() == ["lib/**/__tests__/**/*.js", "src/**/*.test.js"]
    assert (plan["shards"], plan["target-seconds"]) == ("auto", 300)
    assert [s["run"] for s in steps(workflow, "test") if "run" in s] == ["npm ci"]
    assert "jest-junit" in with_of(workflow, "test", "run")["test-command"]
    comment = written(repo, ".github/workflows/ci-shards-comment.yml")
    assert with_of(comment, "comment", "comment")["comment-key"] == "tests/report"


def test_go_module(tmp_path: Path) -> None:
    repo = make(tmp_path, GO)
    done = init(repo)
    assert done.returncode == 0, done.stderr
    assert "runner: go (go.mod)" in done.stderr
    workflow = written(repo)
    assert "gotestsum" in with_of(workflow, "test", "run")["test-command"]
    assert any(s.get("run", "").startswith("go list ./...") for s in steps(workflow, "plan"))


def test_gitlab_pipeline(tmp_path: Path) -> None:
    repo = make(tmp_path, SRC_LAYOUT)
    done = init(repo, "--ci", "gitlab", "--shards", "3")
    assert done.returncode == 0, done.stderr
    pipeline = written(repo, ".gitlab-ci.yml")
    assert pipeline["test"]["parallel"] == 3
    assert pipeline["plan"]["script"] == [
        "ci-shards plan --shards 3 --pytest --output plan.json -- tests"
    ]  # fmt: skip
    assert "python -m pip install -e '.[test]'" in pipeline["default"]["before_script"]
    assert init(repo, "--ci", "gitlab", "--select", "changed", "--coverage", "--force").returncode == 0
    pipeline = written(repo, ".gitlab-ci.yml")
    assert pipeline["plan"]["variables"] == {"GIT_DEPTH": 0}
    assert pipeline["report"]["artifacts"]["reports"]["coverage_report"]["path"] == "coverage/coverage.xml"


def test_an_existing_file_is_refused_unless_forced_and_dry_run_writes_nothing(tmp_path: Path) -> None:
    repo = make(tmp_path, GO)
    (repo / WORKFLOW).parent.mkdir(parents=True)
    (repo / WORKFLOW).write_text("name: mine\n")
    done = init(repo)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        f"ci-shards: {WORKFLOW}: already exists; ci-shards init --force replaces it (or --dry-run shows it)"
    )
    assert (repo / WORKFLOW).read_text() == "name: mine\n"
    dry = init(repo, "--dry-run")
    assert dry.returncode == 0 and dry.stdout.startswith("# Sharded `go test`")
    assert (repo / WORKFLOW).read_text() == "name: mine\n"
    assert init(repo, "--force").returncode == 0
    assert (repo / WORKFLOW).read_text() == dry.stdout


@pytest.mark.parametrize(
    ("files", "flags", "says"),
    [
        ({}, [], "cannot tell the test runner"),
        (GO, ["--ci", "gitlab"], "--ci gitlab writes pytest pipelines only so far"),
        (FLAT, ["--ci", "gitlab", "--shards", "auto"], "--shards auto needs GitHub's dynamic matrix"),
        (FLAT, ["--shards", "0"], "--shards: expected a count of at least 1 or auto"),
        ({"package.json": "[1]"}, [], "package.json: must hold a JSON object"),
        ({"pyproject.toml": "[project"}, [], "pyproject.toml: cannot read"),
        (FLAT, ["--install", "pip install ${{ secrets.X }}"], "would be a GitHub expression"),
    ],
)
def test_what_cannot_be_done_is_one_line_and_exit_2(
    tmp_path: Path, files: dict[str, str], flags: list[str], says: str
) -> None:
    done = init(make(tmp_path, files), *flags)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert says in done.stderr.strip().splitlines()[-1]
    assert not (tmp_path / ".github").exists()
