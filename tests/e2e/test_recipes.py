"""The jest recipe in README.md and docs/run.md, run as written with real jest and jest-junit from npm,
and the go recipe of examples/workflows/go.yml with go and gotestsum (Debian's golang-go, gotestsum).

The commands are read from the documents themselves (not copied here), so a recipe that breaks in
the docs breaks this test. Each shard runs the documented command; the aggregate must account for
every planned file and report the one failing test, at its failing line."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e.built_once import built_once

# No xdist_group: the npm install is built once per session for every worker (tests/e2e/built_once.py), so the
# module's tests may run on both workers at once
pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
JEST_PACKAGES = ["jest@29", "jest-junit@16"]
NETWORK_ERRORS = re.compile(r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network", re.I)
TESTS = {
    "src/sum.test.js": 'test("adds", () => expect(1 + 1).toBe(2));\ntest("adds more", () => expect(2 + 2).toBe(4));\n',
    "src/fail.test.js": 'test("breaks", () => {\n  const got = 1 + 1;\n  expect(got).toBe(3);\n});\n',
    "src/deep/other.test.js": 'describe("group", () => { test("works", () => { expect(true).toBe(true); }); });\n',
    # a file whose name is a regex prefix of another: jest must run exactly the planned paths
    "src/sum.test.js.orig.test.js": 'test("copy", () => { expect(1).toBe(1); });\n',
}


def _documented_commands() -> list[tuple[str, list[str]]]:
    """(where, argv) of every `ci-shards run … jest …` command in README.md and docs/run.md."""
    found = []
    for doc in ("README.md", "docs/run.md"):
        for line in (REPO / doc).read_text(encoding="utf-8").splitlines():
            text = line.strip().removeprefix("$ ")
            if text.startswith("ci-shards run ") and " jest " in text:
                found.append((doc, shlex.split(text, comments=True)))
    return found


def _npm_install(npm: str, folder: Path) -> None:
    """jest and jest-junit installed into ``folder`` (``built_once``: one install per session, not per module
    or worker). ``--prefer-offline``: packages npm's cache holds are not revalidated against the registry."""
    (folder / "package.json").write_text(json.dumps({"name": "recipe", "private": True}))
    install = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", *JEST_PACKAGES],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if install.returncode != 0:
        if NETWORK_ERRORS.search(install.stdout + install.stderr):
            pytest.skip(f"npm cannot reach the registry: {install.stderr.strip().splitlines()[-1:]}")
        pytest.fail(f"npm install failed:\n{install.stdout}\n{install.stderr}")


@pytest.fixture(scope="module")
def jest_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A jest project of its own per module (its TESTS), whose ``node_modules`` links to the session's one
    install (read-only: no test writes into it)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed (the jest recipe needs node and npm)")
    installed = built_once(tmp_path_factory, "jest-node-modules", lambda folder: _npm_install(npm, folder))
    project = tmp_path_factory.mktemp("jest-project")
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(installed / name, project / name)
    (project / "node_modules").symlink_to(installed / "node_modules")
    for name, text in TESTS.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    return project


def _ci_shards(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_SHARDS_"))}
    return subprocess.run(
        [sys.executable, "-m", "ci_shards", *args],
        cwd=cwd,
        env={**environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_docs_have_jest_commands() -> None:
    assert [doc for doc, _argv in _documented_commands()] == ["README.md", "docs/run.md"]


@pytest.mark.parametrize(("doc", "argv"), _documented_commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_documented_jest_command_runs_every_planned_file(jest_project: Path, doc: str, argv: list[str]) -> None:
    work = jest_project / re.sub(r"\W", "_", doc)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    for entry in ("node_modules", "package.json", "src"):
        (work / entry).symlink_to(jest_project / entry)
    planned = _ci_shards(
        "plan", "--glob", "src/**/*.test.js", "--granularity", "file", "--shards", "2", "-o", "plan.json", cwd=work
    )
    assert planned.returncode == 0, planned.stderr
    codes = []
    for index in (1, 2):
        # the documented command, with this plan and this shard (docs say `--shard auto` or `--shard 1/3`)
        args = list(argv[2:])
        args[args.index("--plan") + 1] = "plan.json"
        args[args.index("--shard") + 1] = f"{index}/2"
        result = _ci_shards("run", *args, cwd=work)
        codes.append(result.returncode)
        assert "Could not resolve a module for a custom reporter" not in result.stderr
    assert sorted(codes) == [0, 1]  # the shard with fail.test.js fails, the other passes
    verdict_run = _ci_shards("aggregate", "--plan", "plan.json", "ci-shards-results", "--format", "json", cwd=work)
    assert verdict_run.returncode == 1, verdict_run.stderr
    verdict = json.loads(verdict_run.stdout)
    assert verdict["totals"]["tests"] == 5
    assert verdict["totals"]["failed"] == 1
    summary = _ci_shards(
        "aggregate", "--plan", "plan.json", "ci-shards-results", "--summary", "summary.md", cwd=work
    ).returncode
    assert summary == 1
    text = (work / "summary.md").read_text()
    assert "never ran" not in text  # every planned file ran…
    assert "more than once" not in text  # …exactly once (paths, not regular expressions)
    assert "`src/fail.test.js:3`" in text  # the failing expect, from jest's stack


GO_TESTS = {
    "go.mod": "module example.com/recipe\n\ngo 1.19\n",
    "calc/calc_test.go": 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {}\n',
    "strs/strs_test.go": (
        'package strs\n\nimport "testing"\n\nfunc TestUpper(t *testing.T) {}\nfunc TestLower(t *testing.T) {}\n'
    ),
    "broken/broken_test.go": (
        'package broken\n\nimport "testing"\n\nfunc TestBroken(t *testing.T) {\n'
        '\tgot := 1 + 1\n\tif got != 3 {\n\t\tt.Errorf("got %d, want 3", got)\n\t}\n}\n'
    ),
}


def _go_test_command() -> list[str]:
    """The test-command of examples/workflows/go.yml, with the gotestsum on this machine instead of
    `go run gotest.tools/gotestsum@vX` (which needs a newer Go than a distribution's and the module
    proxy): the arguments after it are the recipe's own."""
    workflow = yaml.safe_load((REPO / "examples" / "workflows" / "go.yml").read_text())
    steps = workflow["jobs"]["test"]["steps"]
    (command,) = [s["with"]["test-command"] for s in steps if s.get("with", {}).get("command") == "run"]
    argv = shlex.split(command)
    assert argv[:2] == ["go", "run"] and argv[2].startswith("gotest.tools/gotestsum@"), argv
    return ["gotestsum", *argv[3:]]


def test_go_recipe_with_gotestsum(tmp_path: Path) -> None:
    missing = [tool for tool in ("go", "gotestsum") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (apt-get install golang-go gotestsum)")
    for name, text in GO_TESTS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    env = {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOCACHE": str(tmp_path / ".gocache"), "HOME": str(tmp_path)}
    env = {**os.environ, **env}
    packages = subprocess.run(
        ["go", "list", "./..."], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    (tmp_path / "packages.txt").write_text(packages.stdout)
    assert (
        _ci_shards("plan", "--items", "packages.txt", "--shards", "2", "-o", "plan.json", cwd=tmp_path).returncode == 0
    )
    codes = [
        _ci_shards("run", "--plan", "plan.json", "--shard", f"{i}/2", "--", *_go_test_command(), cwd=tmp_path, env=env)
        for i in (1, 2)
    ]
    assert sorted(c.returncode for c in codes) == [0, 1], [c.stderr for c in codes]
    result = _ci_shards("aggregate", "--plan", "plan.json", "ci-shards-results", "--format", "json", cwd=tmp_path)
    verdict = json.loads(result.stdout)
    assert verdict["totals"]["tests"] == 4
    assert verdict["totals"]["failed"] == 1
    assert (
        _ci_shards(
            "aggregate", "--plan", "plan.json", "ci-shards-results", "--summary", "s.md", cwd=tmp_path
        ).returncode
        == 1
    )
    text = (tmp_path / "s.md").read_text()
    assert "never ran" not in text
    assert "example.com/recipe/broken::TestBroken" in text
