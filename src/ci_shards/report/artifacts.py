"""Finding and reading shard artifact folders (the IO edge of the aggregate stage).

``actions/download-artifact`` lays the same artifacts out in several ways, and all of them must
work (actions/download-artifact README: ``pattern``, ``merge-multiple``; issue 4):

- one folder per shard: ``results/shard-2-of-4/outcome.json``;
- each artifact in its own folder: ``artifacts/ci-shards-shard-2-of-4-a1/shard-2-of-4/outcome.json``;
- ``merge-multiple: true``: every shard folder side by side in one directory;
- a shard folder given directly: ``ci-shards aggregate --plan p.json results/shard-2-of-4``.

A folder is a shard folder when it is named ``shard-<i>-of-<n>`` or holds an ``outcome.json``.
Reading never raises for a broken folder: every problem becomes a value (``ShardArtifact.problem``,
``junit_error``...) so the verdict can report it next to everything that did work.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_shards.common import json_text
from ci_shards.common.errors import InputError
from ci_shards.junit import JUnitError, parse_junit
from ci_shards.model.failures import FailureRecord
from ci_shards.model.outcome import CaseResult, Outcome

OUTCOME_FILE = "outcome.json"
JUNIT_FILE = "junit.xml"
FAILURES_FILE = "failures.jsonl"
LOG_FILE = "output.log"
_SHARD_DIR = re.compile(r"shard-(\d+)-of-(\d+)")
_ATTEMPT_SUFFIX = re.compile(r"-a(\d+)$")  # the action names artifacts ...-a<run_attempt>
MAX_FAILURE_LINES = 200_000  # a runaway failures.jsonl must not exhaust memory


@dataclass(frozen=True, kw_only=True)
class ShardArtifact:
    """Everything read from one shard folder. ``problem`` is set when outcome.json is unusable."""

    path: Path
    index: int | None  # from outcome.json, else from the folder name
    total: int | None
    outcome: Outcome | None = None
    problem: str = ""
    cases: tuple[CaseResult, ...] | None = None  # None: junit.xml absent or unreadable
    junit_error: str = ""
    failures: tuple[FailureRecord, ...] | None = None  # None: failures.jsonl absent or unreadable
    failures_error: str = ""
    attempt_hint: int = 0  # run attempt parsed from an enclosing artifact folder name (…-a2)

    @property
    def run_attempt(self) -> int:
        if self.outcome is not None and self.outcome.runner.ci_run_attempt:
            return self.outcome.runner.ci_run_attempt
        return self.attempt_hint

    @property
    def finished_at(self) -> str:
        return self.outcome.finished_at if self.outcome is not None else ""


def _walk(root: Path) -> Iterator[Path]:
    """Directories under ``root`` (itself included), sorted so discovery order is stable."""
    for current, dirnames, _files in os.walk(root):
        dirnames.sort()
        yield Path(current)


def discover_shard_folders(dirs: Sequence[Path]) -> list[Path]:
    """Every shard folder under ``dirs``; a directory given that does not exist is an ``InputError``."""
    found: list[Path] = []
    seen: set[Path] = set()
    for given in dirs:
        if not given.is_dir():
            raise InputError(given, "not a directory (expected shard artifact folders)")
        for folder in _walk(given):
            is_shard = _SHARD_DIR.fullmatch(folder.name) or (folder / OUTCOME_FILE).is_file()
            if is_shard and folder.resolve() not in seen:
                seen.add(folder.resolve())
                found.append(folder)
    return found


def _attempt_hint(folder: Path) -> int:
    for part in (folder, *folder.parents):
        match = _ATTEMPT_SUFFIX.search(part.name)
        if match:
            return int(match.group(1))
    return 0


def _read_outcome(path: Path) -> tuple[Outcome | None, str]:
    if not path.is_file():
        return None, f"no {OUTCOME_FILE} (the shard did not finish writing its results)"
    try:
        data = json_text.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:
        return None, f"{OUTCOME_FILE} is unreadable: not UTF-8 text (byte {err.start})"
    except (OSError, json.JSONDecodeError) as err:
        return None, f"{OUTCOME_FILE} is unreadable: {err}"
    if not isinstance(data, dict):
        return None, f"{OUTCOME_FILE} is not a JSON object"
    try:
        return Outcome.from_json(data), ""
    except (ValueError, TypeError, OverflowError) as err:  # OverflowError: a field's int() of a JSON Infinity
        return None, f"{OUTCOME_FILE} is invalid: {err}"


def _read_failures(path: Path) -> tuple[tuple[FailureRecord, ...] | None, str]:
    if not path.is_file():
        return None, ""
    records: list[FailureRecord] = []
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if number > MAX_FAILURE_LINES:
                    return tuple(records), f"{FAILURES_FILE}: more than {MAX_FAILURE_LINES} lines, the rest ignored"
                if not line.strip():
                    continue
                data = json_text.loads(line)
                if not isinstance(data, dict):
                    return tuple(records), f"{FAILURES_FILE} line {number}: not a JSON object"
                records.append(FailureRecord.from_json(data))
    except (OSError, json.JSONDecodeError, ValueError, TypeError) as err:
        return tuple(records), f"{FAILURES_FILE} is unreadable: {err}"
    return tuple(records), ""


def read_shard_folder(folder: Path) -> ShardArtifact:
    """Read one shard folder; every problem is kept as a value, nothing raises."""
    name_match = _SHARD_DIR.fullmatch(folder.name)
    outcome, problem = _read_outcome(folder / OUTCOME_FILE)
    index: int | None
    total: int | None
    if outcome is not None:
        index, total = outcome.shard_index, outcome.shard_total
    elif name_match:
        index, total = int(name_match.group(1)), int(name_match.group(2))
    else:
        index = total = None
    cases: tuple[CaseResult, ...] | None = None
    junit_error = ""
    junit_path = folder / JUNIT_FILE
    if junit_path.is_file():
        try:
            cases = tuple(parse_junit(junit_path))
        except JUnitError as err:
            junit_error = err.problem
    failures, failures_error = _read_failures(folder / FAILURES_FILE)
    return ShardArtifact(
        path=folder,
        index=index,
        total=total,
        outcome=outcome,
        problem=problem,
        cases=cases,
        junit_error=junit_error,
        failures=failures,
        failures_error=failures_error,
        attempt_hint=_attempt_hint(folder),
    )


def read_shard_folders(dirs: Sequence[Path]) -> list[ShardArtifact]:
    return [read_shard_folder(folder) for folder in discover_shard_folders(dirs)]
