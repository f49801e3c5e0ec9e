"""What git says about this run for the test history: who it is (commit, branch, run id from the environment,
else git) and which recorded commits are its ancestors. Git's answers are facts, never errors: no git, a
shallow clone or a slow repository (over ``_GIT_SECONDS``) give empty or unknown answers."""

from __future__ import annotations

import subprocess
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from enum import Enum
from pathlib import Path

from ci_shards.history.outcomes import RunInfo, format_date

_GIT_SECONDS = 10.0


class Ancestry(Enum):
    ANCESTOR = "ancestor"
    NOT_ANCESTOR = "not-ancestor"
    UNKNOWN = "unknown"  # no git, a shallow clone, or no commit recorded


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=_GIT_SECONDS, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _git_text(args: Sequence[str], cwd: Path) -> str:
    done = _git(args, cwd)
    return done.stdout.strip() if done is not None and done.returncode == 0 else ""


def ancestry_of(commits: Collection[str], head: str, cwd: Path) -> dict[str, Ancestry]:
    """``git merge-base --is-ancestor`` per commit: exit 0 yes, 1 no, anything else (no git, a
    shallow clone without that commit) unknown."""
    result: dict[str, Ancestry] = {}
    for commit in commits:
        done = _git(["merge-base", "--is-ancestor", commit, head or "HEAD"], cwd) if commit else None
        code = done.returncode if done is not None else -1
        result[commit] = {0: Ancestry.ANCESTOR, 1: Ancestry.NOT_ANCESTOR}.get(code, Ancestry.UNKNOWN)
    return result


def this_run(env: Mapping[str, str], cwd: Path, now: datetime) -> RunInfo:
    commit = env.get("GITHUB_SHA") or _git_text(["rev-parse", "HEAD"], cwd)
    branch = env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME") or _git_text(["branch", "--show-current"], cwd)
    run_id = env.get("GITHUB_RUN_ID", "")
    run = f"{run_id}.{env.get('GITHUB_RUN_ATTEMPT') or '1'}" if run_id else f"local-{format_date(now)}"
    return RunInfo(run=run, commit=commit, branch=branch, date=now)
