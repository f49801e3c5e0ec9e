"""The pytest example workflow with ``select: changed`` on a pull_request event, run for real with act.

A pull request that changes one source file plans and runs fewer shards, and the report's summary lists what
was skipped by the diff; one that changes ``conftest.py`` plans everything (docs/selection.md).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.gha.act_harness import make_repo, run_act
from tests.e2e.gha.test_act_pytest import example_workflow, plan_of, report

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SOURCES = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "text.py": "def shout(s):\n    return s.upper()\n",
    "tests/conftest.py": "",
    "tests/test_calc.py": "".join(
        f"from calc import add\n\n\ndef test_add_{i}():\n    assert add({i}, 1) == {i + 1}\n\n" for i in range(4)
    ),
    "tests/test_text.py": "".join(
        f"from text import shout\n\n\ndef test_shout_{i}():\n    assert shout('a{i}') == 'A{i}'\n\n" for i in range(4)
    ),
}
DURATIONS = {
    **{f"tests/test_calc.py::test_add_{i}": 5.0 for i in range(4)},
    **{f"tests/test_text.py::test_shout_{i}": 5.0 for i in range(4)},
}


def select_workflow() -> dict[str, Any]:
    workflow = example_workflow()
    for step in workflow["jobs"]["plan"]["steps"]:
        if step.get("id") == "plan":
            step["with"]["select"] = "changed"
        if str(step.get("uses", "")).startswith("actions/checkout"):
            step["with"] = {"fetch-depth": 0}  # the selection needs the base commit
    return workflow


def pull_request(tmp_path: Path, change: dict[str, str]) -> tuple[Path, dict[str, Any]]:
    files: dict[str, str | Path] = {**SOURCES, ".test_durations": json.dumps(DURATIONS)}
    repo = make_repo(tmp_path / "repo", select_workflow(), files)
    git = ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid"]
    base = subprocess.run([*git, "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True)
    subprocess.run([*git, "checkout", "-q", "-b", "feature"], cwd=repo, check=True)
    for path, text in change.items():
        (repo / path).write_text(text)
    subprocess.run([*git, "commit", "-qam", "the change"], cwd=repo, check=True)
    payload = {
        "pull_request": {"number": 1, "base": {"sha": base.stdout.strip(), "ref": "main"}, "labels": []},
        "repository": {"default_branch": "main"},
    }
    return repo, payload


def test_a_source_change_runs_fewer_shards_and_the_summary_lists_what_was_skipped(
    act: str,
    wheels: Path,
    tmp_path: Path,
) -> None:
    repo, payload = pull_request(tmp_path, {"text.py": "def shout(s):\n    return s.upper()  # changed\n"})
    run = run_act(act, repo, tmp_path, wheels, event_name="pull_request", payload=payload)
    print(f"act run took {run.seconds:.1f}s; log in {tmp_path / 'act.log'}")
    jobs = run.job_results()
    assert jobs.get("report") == "succeeded", (jobs, run.log[-3000:])
    plan = plan_of(run)
    assert sorted(plan["skipped_by_diff"]) == sorted(k for k in DURATIONS if "test_calc" in k), plan
    assert plan["total"] < 4  # 4 shards shrink to the selected half of the work
    assert sum(1 for job in jobs if job.startswith("test")) == plan["total"], jobs
    summary = (report(run) / "summary.md").read_text()
    assert "4 items skipped by the diff (skipped-by-diff)" in summary, summary
    assert "import map selected 1 test files" in summary


def test_a_conftest_change_runs_everything(act: str, wheels: Path, tmp_path: Path) -> None:
    repo, payload = pull_request(tmp_path, {"tests/conftest.py": "import os\n"})
    run = run_act(act, repo, tmp_path, wheels, event_name="pull_request", payload=payload)
    jobs = run.job_results()
    assert jobs.get("report") == "succeeded", (jobs, run.log[-3000:])
    plan = plan_of(run)
    assert "skipped_by_diff" not in plan and plan["total"] == 4, plan
    summary = (report(run) / "summary.md").read_text()
    assert "run everything: tests/conftest.py changed, a global file" in summary, summary
