"""CI fan-out: the GitHub matrix and job outputs, and which shard this CI machine is.

GitHub Actions has no shard variables of its own: a plan job emits a dynamic matrix
(``{"include": [{"shard": 1, "total": 4, "label": "1/4"}, ...]}``) and each matrix job passes
``--shard I/N``. GitLab, CircleCI, Buildkite and Bazel say which shard a machine is through
environment variables, read by ``resolve_shard(spec="auto", env)``.

The deciding parts (``github_matrix``, ``resolve_shard``, ``format_outputs``) are pure; only
``append_outputs`` touches a file.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ci_shards.common.errors import InputError, UsageError
from ci_shards.model.plan import Plan, parse_shard_spec

# GitHub: "A matrix will generate a maximum of 256 jobs per workflow run."
# https://docs.github.com/en/actions/reference/limits (it cannot be raised)
GITHUB_MATRIX_MAX: Final = 256


def over_matrix_limit(shards: int, what: str) -> str:
    """The usage error for a plan GitHub would refuse to fan out (the workflow fails before any job runs)."""
    return (
        f"{what}: {shards} shards exceed GitHub's matrix limit of {GITHUB_MATRIX_MAX} jobs per workflow run;"
        f" use at most {GITHUB_MATRIX_MAX} shards (plan for other CIs with `ci-shards plan --shards N`)"
    )


# (index variable, total variable, index base), in the order they are tried.
# GitLab: https://docs.gitlab.com/ee/ci/yaml/#parallel (CI_NODE_INDEX is 1-based)
# CircleCI: https://circleci.com/docs/parallelism-faster-jobs (CIRCLE_NODE_INDEX is 0-based)
# Buildkite: https://buildkite.com/docs/pipelines/environment-variables (BUILDKITE_PARALLEL_JOB is 0-based)
# Bazel: https://bazel.build/reference/test-encyclopedia (TEST_SHARD_INDEX is 0-based)
PROVIDERS: Final = (
    ("GitLab", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1),
    ("CircleCI", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),
    ("Buildkite", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),
    ("Bazel", "TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS", 0),
)


def resolve_shard(spec: str, env: Mapping[str, str]) -> tuple[int, int]:
    """``--shard I/N`` or ``--shard auto`` → (index, total), 1-based; ``UsageError`` with the reason."""
    if spec.strip() != "auto":
        try:
            return parse_shard_spec(spec)
        except ValueError as err:
            msg = f"--shard: {err}"
            raise UsageError(msg) from None
    explicit = env.get("CI_SHARDS_SHARD", "").strip()
    if explicit:  # ci-shards' own variable: I/N, for any CI (set it from the matrix in a reusable workflow)
        try:
            return parse_shard_spec(explicit)
        except ValueError as err:
            msg = f"--shard auto: CI_SHARDS_SHARD: {err}"
            raise UsageError(msg) from None
    for provider, index_var, total_var, base in PROVIDERS:
        raw_index, raw_total = env.get(index_var), env.get(total_var)
        if raw_index is None and raw_total is None:
            continue
        if raw_index is None or raw_total is None:
            missing = index_var if raw_index is None else total_var
            msg = f"--shard auto: {provider}'s {missing} is not set (both {index_var} and {total_var} are needed)"
            raise UsageError(msg)
        if not (raw_index.strip().isdigit() and raw_total.strip().isdigit()):
            msg = f"--shard auto: {index_var}={raw_index!r} and {total_var}={raw_total!r} must be whole numbers"
            raise UsageError(msg)
        index, total = int(raw_index) + 1 - base, int(raw_total)
        try:
            return parse_shard_spec(f"{index}/{total}")
        except ValueError as err:
            msg = f"--shard auto: from {index_var}={raw_index} ({base}-based), {total_var}={raw_total}: {err}"
            raise UsageError(msg) from None
    names = ", ".join(["CI_SHARDS_SHARD", *(f"{index_var}/{total_var}" for _, index_var, total_var, _ in PROVIDERS)])
    msg = f"--shard auto: no CI shard variables found (looked for {names}); pass --shard I/N"
    raise UsageError(msg)


def github_matrix(plan: Plan) -> dict[str, Any]:
    """The ``strategy.matrix`` value: one ``include`` entry per shard."""
    return {
        "include": [
            {"shard": shard.index, "total": plan.total, "label": f"{shard.index}/{plan.total}"} for shard in plan.shards
        ]
    }


def matrix_json(plan: Plan) -> str:
    """The matrix as one compact line (job outputs and ``fromJSON`` want it small)."""
    return json.dumps(github_matrix(plan), separators=(",", ":"), sort_keys=True)


def job_outputs(plan: Plan) -> dict[str, str]:
    """The step outputs the action reads: ``matrix``, ``plan-digest``, ``total``, ``empty``."""
    return {
        "matrix": matrix_json(plan),
        "plan-digest": plan.digest,
        "total": str(plan.total),
        "empty": "true" if not plan.items else "false",
    }


def format_outputs(outputs: Mapping[str, str], delimiter: str | None = None) -> str:
    """``$GITHUB_OUTPUT`` text: every value in the multi-line form with a random delimiter
    (docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands, "Multiline strings"), like
    actions/toolkit's
    ``ghadelimiter_<uuid>``; a delimiter that occurs in a value is refused, as the toolkit does."""
    delim = delimiter or f"ghadelimiter_{secrets.token_hex(16)}"
    lines = []
    for name, value in outputs.items():
        if delim in name or delim in value:
            msg = f"output {name!r} contains the delimiter"
            raise ValueError(msg)
        lines.append(f"{name}<<{delim}\n{value}\n{delim}\n")
    return "".join(lines)


def append_outputs(path: str | Path, outputs: Mapping[str, str]) -> None:
    """Append to ``$GITHUB_OUTPUT`` (never overwrite: other steps' outputs live there too)."""
    try:
        with Path(path).open("a", encoding="utf-8") as handle:
            handle.write(format_outputs(outputs))
    except OSError as err:
        raise InputError(path, f"cannot append to GITHUB_OUTPUT: {err.strerror or err}") from None
