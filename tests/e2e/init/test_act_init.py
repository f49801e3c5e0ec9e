"""The workflow ``ci-shards init`` writes for a src-layout package with a test extra, run for real with act
(host mode, the stand-ins for actions/*, this checkout as the action: tests/e2e/gha/act_harness.py): a
passing verdict, then, with one failing test added, a failing verdict naming it.

Slow (two whole workflows, about a minute each): ``.venv/bin/python -m pytest -m slow tests/e2e/init``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.gha.act_harness import ActRun, run_act
from tests.e2e.gitignore import write_gitignore
from tests.e2e.init.test_init import SRC_LAYOUT, make

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TESTS = {
    f"tests/test_{name}.py": f"from calc import add\n\n\ndef test_{name}_{i}():\n    assert add({i}, 1) == {i + 1}\n"
    for name in ("one", "two", "three")
    for i in (1,)
}
FAILING = "tests/test_broken.py"
FAILING_ID = f"{FAILING}::test_broken"


def initialised_repo(root: Path, files: dict[str, str]) -> Path:
    repo = make(root, {**SRC_LAYOUT, **files})
    done = subprocess.run([sys.executable, "-m", "ci_shards", "init", "--shards", "2"], cwd=repo,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    write_gitignore(repo)
    git = ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "-c", "init.defaultBranch=main"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "e2e"]):
        subprocess.run([*git, *cmd], cwd=repo, check=True, capture_output=True)
    return repo


def summary(run: ActRun) -> str:
    return (run.artifact("ci-shards-report-a1") / "summary.md").read_text()


def test_the_written_workflow_passes_then_fails_naming_the_failing_test(act: str, wheels: Path, tmp_path: Path) -> None:
    green = run_act(act, initialised_repo(tmp_path / "green", TESTS), tmp_path / "green-act", wheels)
    print(f"act run took {green.seconds:.1f}s; log in {tmp_path / 'green-act' / 'act.log'}")
    assert green.returncode == 0, green.log[-3000:]
    assert green.job_results().get("report") == "succeeded", green.job_results()
    assert "ci-shards: passed" in summary(green)

    broken = {**TESTS, FAILING: "def test_broken():\n    assert 6 * 7 == 41\n"}
    red = run_act(act, initialised_repo(tmp_path / "red", broken), tmp_path / "red-act", wheels)
    print(f"act run took {red.seconds:.1f}s; log in {tmp_path / 'red-act' / 'act.log'}")
    assert red.returncode != 0, red.log[-3000:]
    jobs = red.job_results()
    assert jobs.get("plan") == "succeeded" and jobs.get("report") == "failed", jobs
    text = summary(red)
    assert "ci-shards: failed" in text and FAILING_ID in text, text
