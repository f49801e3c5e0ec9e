"""What the CI's environment says about the change: its base, labels, branch, merge queue. Pure.

``env`` is the environment, ``event`` the parsed GitHub event payload (``GITHUB_EVENT_PATH``; {} when
there is none). Nothing here reads files or the environment itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ci_shards.select.paths import matches
from ci_shards.select.settings import SelectionSettings

MERGE_QUEUE_BRANCHES = ("gh-readonly-queue/**",)  # GitHub's merge queue branches


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def ci_base(env: Mapping[str, str], event: Mapping[str, Any]) -> tuple[str, str] | None:
    """The base to diff against and where it came from, or None when the CI names none.

    GitHub: the event's ``pull_request.base.sha`` (exact), else ``origin/$GITHUB_BASE_REF``; GitLab:
    ``CI_MERGE_REQUEST_DIFF_BASE_SHA``; Buildkite: ``origin/$BUILDKITE_PULL_REQUEST_BASE_BRANCH``;
    CircleCI has no base variable, so ``CIRCLE_PULL_REQUEST`` runs fall back to the merge base with
    the default branch (``CI_SHARDS_BASE`` names one anywhere)."""
    if env.get("CI_SHARDS_BASE"):
        return env["CI_SHARDS_BASE"], "CI_SHARDS_BASE"
    sha = _get(event, "pull_request", "base", "sha")
    if isinstance(sha, str) and sha:
        return sha, "the pull_request event's base sha"
    for variable, prefix in (
        ("GITHUB_BASE_REF", "origin/"),
        ("CI_MERGE_REQUEST_DIFF_BASE_SHA", ""),
        ("BUILDKITE_PULL_REQUEST_BASE_BRANCH", "origin/"),
    ):
        if env.get(variable):
            return prefix + env[variable], variable
    return None


def ci_default_branch(env: Mapping[str, str], event: Mapping[str, Any]) -> str | None:
    branch = _get(event, "repository", "default_branch")
    if isinstance(branch, str) and branch:
        return branch
    return env.get("CI_DEFAULT_BRANCH") or env.get("BUILDKITE_PIPELINE_DEFAULT_BRANCH") or None


def ci_branch(env: Mapping[str, str]) -> str | None:
    """The branch being built (not a pull request's merge ref)."""
    github_push = env.get("GITHUB_EVENT_NAME", "push") == "push" and env.get("GITHUB_REF_TYPE", "branch") == "branch"
    if github_push and env.get("GITHUB_REF_NAME"):
        return env["GITHUB_REF_NAME"]
    return env.get("CI_COMMIT_BRANCH") or env.get("BUILDKITE_BRANCH") or env.get("CIRCLE_BRANCH") or None


def labels(env: Mapping[str, str], event: Mapping[str, Any]) -> set[str]:
    found = {
        str(label.get("name"))
        for label in _get(event, "pull_request", "labels") or ()
        if isinstance(label, Mapping) and label.get("name")
    }
    found.update(name.strip() for name in env.get("CI_MERGE_REQUEST_LABELS", "").split(",") if name.strip())
    return found


def run_all_reason(
    env: Mapping[str, str],
    event: Mapping[str, Any],
    settings: SelectionSettings,
    *,
    branch: str | None,
    default_branch: str | None,
) -> str:
    """Why the environment forbids selecting ("" when it allows it). ``branch``: the branch being built
    (from the CI, else git); ``default_branch``: the repository's (settings, CI, else git)."""
    if env.get("CI_SHARDS_SELECT", "").strip().lower() == "off":
        return "CI_SHARDS_SELECT=off"
    if settings.run_all_label in labels(env, event):
        return f"the pull request has the label {settings.run_all_label!r}"
    if not settings.select_in_merge_queue:
        if env.get("GITHUB_EVENT_NAME") == "merge_group":
            return "a merge queue run (merge_group event; selection.in-merge-queue: select allows selecting)"
        if env.get("CI_MERGE_REQUEST_EVENT_TYPE") == "merge_train":
            return "a GitLab merge train (selection.in-merge-queue: select allows selecting)"
        if branch and any(matches(branch, b) for b in MERGE_QUEUE_BRANCHES):
            return f"a merge queue branch ({branch})"
    if not settings.select_on_default_branch and branch and default_branch and branch == default_branch:
        return f"the default branch ({branch}) runs everything (selection.on-default-branch: select allows selecting)"
    return ""


RUN_ALL_TRAILER = "ci-shards: run-all"


def has_run_all_trailer(messages: str) -> bool:
    """Whether a commit message holds the trailer line ``CI-Shards: run-all`` (any case)."""
    return any(line.strip().lower() == RUN_ALL_TRAILER for line in messages.splitlines())
