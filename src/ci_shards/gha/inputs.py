"""The action's inputs → the ci-shards argv of each step, artifact names and the verdict (pure).

action.yml hands every input to Python at once as ``CI_SHARDS_INPUTS: ${{ toJSON(inputs) }}``, so this module is
the one place where an input becomes a flag: a new input is one line in action.yml's ``inputs:``, one line here,
and its option's ``action_input`` in ``ci_shards.options.declared`` (or an entry of ``ACTION_ONLY_INPUTS``).
Free text (pytest-args, test-command) is split like a shell would, once, and never run by a shell.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import PurePath
from typing import Final

from ci_shards.common import json_text
from ci_shards.common.errors import EXIT_FAILED, EXIT_OK, UsageError

INPUTS_ENV: Final = "CI_SHARDS_INPUTS"


class Verdict(Enum):
    """The action's ``verdict`` output, from aggregate's exit code (0 passed, 1 failed, anything else error)."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"


@dataclass(frozen=True)
class Folders:
    """Where the steps keep their files, all under ``$RUNNER_TEMP`` (never the workspace)."""

    temp: PurePath

    @property
    def plan(self) -> PurePath:
        return self.temp / "ci-shards-plan" / "plan.json"

    @property
    def results(self) -> PurePath:
        return self.temp / "ci-shards-results"

    @property
    def shards(self) -> PurePath:
        return self.temp / "ci-shards-shards"

    @property
    def report(self) -> PurePath:
        return self.temp / "ci-shards-report"


def parse_inputs(text: str) -> dict[str, str]:
    """``toJSON(inputs)`` → {input name: text}; a boolean or number (a runner may type one) reads as YAML wrote it."""
    try:
        data = json_text.loads(text or "{}")
    except json.JSONDecodeError as err:
        msg = f"{INPUTS_ENV} is not JSON ({err.msg}); action.yml must pass ${{{{ toJSON(inputs) }}}}"
        raise UsageError(msg) from None
    if not isinstance(data, dict):
        msg = f"{INPUTS_ENV} must be a JSON object of the action's inputs"
        raise UsageError(msg)
    return {str(k): _text(v) for k, v in data.items()}


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def words(inputs: Mapping[str, str], name: str) -> list[str]:
    """Split a free-text input like a shell would (quotes, escapes), without a shell ever evaluating it."""
    try:
        return shlex.split(inputs.get(name, ""))
    except ValueError as err:
        msg = f"input {name}: {err} (quote it as you would in a shell)"
        raise UsageError(msg) from None


def lines(inputs: Mapping[str, str], name: str) -> list[str]:
    """One value per non-blank line (glob, items)."""
    return [line.strip() for line in inputs.get(name, "").splitlines() if line.strip()]


def is_true(inputs: Mapping[str, str], name: str, *, default: bool = False) -> bool:
    """A boolean input is ``true`` or anything else; an absent one takes action.yml's default."""
    value = inputs.get(name, "").strip().lower()
    return default if not value else value == "true"


def timings_path(inputs: Mapping[str, str]) -> str:
    """Where the timings store lives, relative to working-directory (the cache step restores it there)."""
    return inputs.get("timings-path", "") or ".ci-shards/timings.json"


def _option(inputs: Mapping[str, str], name: str, flag: str) -> list[str]:
    value = inputs.get(name, "")
    return [flag, value] if value else []


def _switch(inputs: Mapping[str, str], name: str, flag: str) -> list[str]:
    return [flag] if is_true(inputs, name) else []


def plan_argv(inputs: Mapping[str, str], folders: Folders, *, timings_exist: bool) -> list[str]:
    """``ci-shards matrix``: plan.json under RUNNER_TEMP, the matrix into $GITHUB_OUTPUT."""
    argv = ["matrix", "--plan-out", str(folders.plan)]
    argv += _option(inputs, "granularity", "--granularity")
    argv += _option(inputs, "shards", "--shards")
    argv += _option(inputs, "target-seconds", "--target-seconds")
    argv += _option(inputs, "workers", "--workers")
    argv += _option(inputs, "variant", "--variant")
    argv += _switch(inputs, "allow-empty", "--allow-empty")
    argv += _option(inputs, "select", "--select")
    # ci-shards is installed into this Python (bootstrap), so it is sys.executable already: said, not assumed
    argv += _option(inputs, "python", "--python")
    # The cached store first; the committed file covers items the store has not measured yet.
    # --cached-durations: a corrupt cache entry is a warning, not a failed plan (the next aggregate replaces it).
    if timings_exist:
        argv += ["--cached-durations", timings_path(inputs)]
    argv += _option(inputs, "durations", "--durations")
    for glob in lines(inputs, "glob"):
        argv += ["--glob", glob]
    for items in lines(inputs, "items"):
        argv += ["--items", items]
    if is_true(inputs, "pytest"):
        # discover: files on disk by pytest settings + the timings (no imports); else collect with pytest
        argv.append("--discover" if is_true(inputs, "discover", default=True) else "--pytest")
        argv += _after_dashes(words(inputs, "pytest-args"))
    return argv


def run_argv(inputs: Mapping[str, str], folders: Folders) -> list[str]:
    """``ci-shards run``: one shard, its folder under RUNNER_TEMP."""
    argv = ["run", "--plan", str(folders.plan), "--shard", inputs.get("shard", "") or "auto"]
    argv += ["--out", str(folders.results), "--timeout", inputs.get("timeout", "") or "30m"]
    argv += ["--retries", inputs.get("retries", "") or "0"]
    argv += _option(inputs, "junit", "--junit")
    argv += _switch(inputs, "allow-empty", "--allow-empty")
    argv += _switch(inputs, "coverage", "--coverage")
    argv += _option(inputs, "python", "--python")
    argv += _option(inputs, "workers", "--workers")
    if is_true(inputs, "pytest"):
        return [*argv, "--pytest", *_after_dashes(words(inputs, "pytest-args"))]
    command = words(inputs, "test-command")
    if not command:
        msg = "command 'run' needs the input test-command (or pytest: true)"
        raise UsageError(msg)
    return [*argv, "--", *command]


def aggregate_argv(inputs: Mapping[str, str], folders: Folders) -> list[str]:
    """``ci-shards aggregate``: every report file into the report folder, the timings store updated in place.
    The plan, not needs.<job>.result, says which shards to expect: one that never started has no folder."""
    report = folders.report
    argv = ["aggregate", "--plan", str(folders.plan), "--junit-out", str(report / "junit.xml")]
    argv += ["--failures", str(report / "failures.jsonl"), "--summary", str(report / "summary.md")]
    argv += ["--comment-out", str(report / "comment.md"), "--timings-out", timings_path(inputs)]
    argv += ["--variant", inputs.get("variant", "")]
    if is_true(inputs, "comment", default=True):
        argv += ["--comment", "--comment-mode", inputs.get("comment-mode", "") or "always"]
    argv += _switch(inputs, "allow-empty", "--allow-empty")
    argv += _option(inputs, "fail-on", "--fail-on")
    argv += _switch(inputs, "record-history", "--record-history")
    if is_true(inputs, "coverage"):
        argv += ["--coverage-out", str(report / "coverage")]
    return [*argv, str(folders.shards)]


def comment_argv(inputs: Mapping[str, str], folders: Folders) -> list[str]:
    """``ci-shards comment``: the fork-safe workflow_run recipe; the artifacts are read as data."""
    argv = ["comment", "--plan", str(folders.plan), "--comment-mode", inputs.get("comment-mode", "") or "always"]
    argv += _option(inputs, "pr", "--pr")
    argv += _option(inputs, "comment-key", "--comment-key")
    return [*argv, str(folders.shards)]


def _after_dashes(extra: list[str]) -> list[str]:
    return ["--", *extra] if extra else []


def shard_artifact_name(prefix: str, shard_folders: list[str], attempt: str) -> str | None:
    """``<prefix>-shard-I-of-N-a<attempt>``: v4 artifacts are immutable, so a re-run must not reuse a name (409)."""
    found = sorted(name for name in shard_folders if name.startswith("shard-") and "-of-" in name)
    return f"{prefix}-{found[0]}-a{attempt or '1'}" if found else None


def verdict_of(status: int) -> Verdict:
    if status == EXIT_OK:
        return Verdict.PASSED
    return Verdict.FAILED if status == EXIT_FAILED else Verdict.ERROR


def step_exit(status: int, *, fail_on_verdict: bool) -> int:
    """The Verdict step's exit code: aggregate's own, unless fail-on-verdict is false."""
    return status if fail_on_verdict else EXIT_OK
