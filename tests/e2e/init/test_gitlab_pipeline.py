"""The pipeline ``ci-shards init --ci gitlab`` writes, run for real with gitlab-ci-local (npm, 4.52.2 on node 20):
plan → ``parallel: 4`` test jobs, each choosing its shard from GitLab's ``CI_NODE_INDEX`` → one report job that
reads every shard's artifacts. One failing test among 13: the report job fails naming it, and the merged JUnit
holds every planned test once.

Two changes to the written file, both because this machine is not a GitLab runner: no ``image:`` (no docker
daemon here, so gitlab-ci-local's shell executor runs each job in its own copy of the repository,
``--shell-isolation``), and no ``pip install "ci-shards @ git+https://…@v1"`` line (the release tag is on GitHub,
out of reach; this checkout's ci-shards is on the jobs' PATH instead). Everything else runs as written: the
project's own install line, the plan, run and aggregate commands, the artifacts and ``needs``.

Needs ``gitlab-ci-local`` and ``rsync`` on PATH (.ci/run installs both) and skips without them. Slow (about
half a minute): ``.venv/bin/python -m pytest -m slow tests/e2e/init/test_gitlab_pipeline.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tests.e2e.gitignore import GITIGNORE
from tests.e2e.init.test_init import init, make

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

NAMES = ("one", "two", "three")
PASSING = {
    f"tests/test_{name}.py": "".join(f"def test_{name}_{i}():\n    assert {i} + 1 == {i + 1}\n\n\n" for i in range(4))
    for name in NAMES
}
FAILING_ID = "tests/test_broken.py::test_broken"
PROJECT = {
    "pytest.ini": "[pytest]\ntestpaths = tests\n",
    **PASSING,
    "tests/test_broken.py": "def test_broken():\n    assert 6 * 7 == 41\n",
    ".gitignore": GITIGNORE + ".gitlab-ci-local/\n",
}
RELEASE_INSTALL = re.compile(r"pip install \"ci-shards(\[\w+\])? @ git\+https://")


@pytest.fixture(scope="module")
def gitlab_ci_local() -> str:
    found = shutil.which("gitlab-ci-local")
    if found is None or shutil.which("rsync") is None:
        pytest.skip("gitlab-ci-local (npm) and rsync are needed; .ci/run installs both")
    return found


def for_this_machine(pipeline: dict[str, object]) -> dict[str, object]:
    """The written pipeline with the two changes the module docstring gives, each checked to be there."""
    default = pipeline["default"]
    assert isinstance(default, dict) and default.pop("image", "").startswith("python:"), default
    kept = [line for line in default["before_script"] if not RELEASE_INSTALL.search(line)]
    assert len(kept) == len(default["before_script"]) - 1, default["before_script"]
    default["before_script"] = kept
    return pipeline


def pipeline_repo(root: Path) -> Path:
    repo = make(root, PROJECT)
    written = init(repo, "--ci", "gitlab")
    assert written.returncode == 0, written.stderr
    path = repo / ".gitlab-ci.yml"
    path.write_text(yaml.safe_dump(for_this_machine(yaml.safe_load(path.read_text())), sort_keys=False))
    git = ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "-c", "init.defaultBranch=main"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "e2e"]):
        subprocess.run([*git, *cmd], cwd=repo, check=True, capture_output=True)
    return repo


def test_the_written_pipeline_fails_naming_the_failing_test_and_merges_every_test_once(
    gitlab_ci_local: str, tmp_path: Path
) -> None:
    repo = pipeline_repo(tmp_path / "repo")
    # this checkout's ci-shards and pytest come first on the jobs' PATH (the shell executor inherits it)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run(
        [gitlab_ci_local, "--shell-executor-no-image", "--shell-isolation", "--artifacts-to-source",
         "--home", str(tmp_path / "home")],
        cwd=repo, env=env, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    log = run.stdout + run.stderr
    assert run.returncode != 0, log[-3000:]
    assert re.search(r"PASS\s+plan\b", log), log[-3000:]
    assert re.search(r"FAIL\s+report\b", log), log[-3000:]
    shards = re.findall(r"(PASS|FAIL)\s+test: \[(\d)/4\]", log)
    assert sorted(index for _, index in shards) == ["1", "2", "3", "4"], log[-3000:]
    assert [status for status, _ in shards].count("FAIL") == 1, shards  # the one shard that drew the failing test
    summary = (repo / "summary.md").read_text().replace("\\", "")  # unescaped Markdown: test\_broken
    assert FAILING_ID in summary and "**13** tests" in summary, summary
    ids = [f"{case.get('file')}::{case.get('name')}" for case in ET.parse(repo / "merged.xml").iter("testcase")]
    expected = [f"tests/test_{name}.py::test_{name}_{i}" for name in NAMES for i in range(4)]
    assert sorted(ids) == sorted([*expected, FAILING_ID])
