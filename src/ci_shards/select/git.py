"""The repository edge: every git command the selection runs, each failure one ``GitProblem`` line."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ci_shards.select.diff import ChangedFile, parse_name_status

DEEPEN_HINT = (
    "fetch the history: actions/checkout with 'fetch-depth: 0', or 'git fetch --deepen=<n>' / 'git fetch --unshallow'"
)


class GitProblem(Exception):
    """git could not answer: the selection runs everything, with this as the reason."""


def git(cwd: Path, *args: str, check: bool = True) -> str:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            check=False,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
        )
    except OSError as err:
        msg = f"git cannot be run ({err.strerror or err})"
        raise GitProblem(msg) from None
    if check and done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["no message"])[0]
        msg = f"git {' '.join(args[:2])} failed: {first}"
        raise GitProblem(msg)
    return done.stdout


def succeeds(cwd: Path, *args: str) -> bool:
    try:
        return subprocess.run(["git", *args], cwd=cwd, check=False, capture_output=True).returncode == 0
    except OSError:
        return False


def toplevel(cwd: Path) -> Path:
    return Path(git(cwd, "rev-parse", "--show-toplevel").strip())


def is_shallow(cwd: Path) -> bool:
    return git(cwd, "rev-parse", "--is-shallow-repository").strip() == "true"


def current_branch(cwd: Path) -> str | None:
    """The checked-out branch, or None on a detached HEAD."""
    name = git(cwd, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).strip()
    return name or None


def default_branch(cwd: Path) -> str | None:
    """origin's HEAD branch, else the first of main/master that exists."""
    head = git(cwd, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD", check=False).strip()
    if head:
        return head.removeprefix("origin/")
    for name in ("main", "master"):
        if succeeds(cwd, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}") or succeeds(
            cwd, "rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{name}"
        ):
            return name
    return None


def resolve(cwd: Path, ref: str) -> str:
    if ref.startswith("-"):
        msg = f"base {ref!r} is not a revision"
        raise GitProblem(msg)
    sha = git(cwd, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False).strip()
    if not sha:
        msg = f"base {ref!r} is not a commit in this repository; {DEEPEN_HINT}"
        raise GitProblem(msg)
    return sha


def is_ancestor(cwd: Path, base: str) -> bool:
    return succeeds(cwd, "merge-base", "--is-ancestor", base, "HEAD")


def merge_base(cwd: Path, ref: str) -> str:
    sha = git(cwd, "merge-base", ref, "HEAD", check=False).strip()
    if not sha:
        msg = f"{ref} and HEAD have no merge base here; {DEEPEN_HINT}"
        raise GitProblem(msg)
    return sha


def changed_files(cwd: Path, base: str) -> tuple[ChangedFile, ...]:
    output = git(cwd, "diff", "--name-status", "-z", "-M", "--no-ext-diff", "--no-color", f"{base}...HEAD")
    try:
        return parse_name_status(output)
    except ValueError as err:
        raise GitProblem(str(err)) from None


def messages(cwd: Path, base: str) -> str:
    """The commit messages of ``base..HEAD`` (where a ``CI-Shards: run-all`` trailer may be)."""
    return git(cwd, "log", "--format=%B", f"{base}..HEAD")


def tracked(cwd: Path, patterns: Sequence[str]) -> list[str]:
    """Tracked files (repository paths) matching git pathspecs, plus untracked, not ignored ones."""
    out = git(cwd, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *patterns)
    return sorted({p for p in out.split("\0") if p})


def base_sha256(cwd: Path, base: str, paths: Sequence[str]) -> dict[str, str]:
    """sha256 of each path's content at ``base`` (a path absent there is left out)."""
    found: dict[str, str] = {}
    for path in paths:
        done = subprocess.run(["git", "show", f"{base}:{path}"], cwd=cwd, check=False, capture_output=True)
        if done.returncode == 0:
            found[path] = hashlib.sha256(done.stdout).hexdigest()
    return found


def text_at(cwd: Path, ref: str, path: str) -> str | None:
    """``path``'s content at commit ``ref`` (None when it is not there or not text)."""
    done = subprocess.run(["git", "show", f"{ref}:{path}"], cwd=cwd, check=False, capture_output=True)
    if done.returncode != 0:
        return None
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None


def zero_context_diff(cwd: Path, base: str, path: str) -> str:
    """``git diff -U0`` of one file from ``base`` to HEAD: its hunk headers give the changed base lines."""
    return git(cwd, "diff", "-U0", "--no-ext-diff", "--no-color", "--no-renames", f"{base}...HEAD", "--", path)
