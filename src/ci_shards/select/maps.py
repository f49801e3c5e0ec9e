"""The maps that link a changed file to the test files it can break, besides the import map. Pure.

Every map answers ``tests_for(path)``: a set of test files, or None when it cannot say anything about
that path. The decision unions the answers; a path no map can answer for runs everything.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Protocol

from ci_shards.coverage.context_map import LineGroups, decode, from_tests, names_at, read_table
from ci_shards.select.narrow import Confined, FunctionBody, Narrowing, files_that_ran, module_name
from ci_shards.select.paths import matches, shown
from ci_shards.select.recorded import RecordedTests

COVERAGE_SCHEMA: Final = "ci-shards/coverage@1"


class TestMap(Protocol):
    @property
    def name(self) -> str: ...

    def tests_for(self, path: str) -> frozenset[str] | None: ...


class MapError(ValueError):
    """A map source is unusable (unreadable coverage.json, a file the import map cannot parse)."""


@dataclass(frozen=True)
class TouchfilesMap:
    """``touchfiles`` from the config: test globs → the source globs they depend on."""

    rules: Mapping[str, tuple[str, ...]]
    test_files: frozenset[str]
    name: str = "touchfiles"

    def tests_for(self, path: str) -> frozenset[str] | None:
        hits = [test_glob for test_glob, sources in self.rules.items() if any(matches(path, s) for s in sources)]
        if not hits:
            return None
        return frozenset(t for t in self.test_files if any(matches(t, g) for g in hits))


@dataclass(frozen=True)
class CoverageMap:
    """The test files that executed each source file in a full run on the base branch (coverage.json).

    An entry counts only while the file is as it was measured: its sha256 at the base equals the
    recorded one (``base_sha256``), else the map says nothing about it (stale)."""

    executed_by: Mapping[str, tuple[str, frozenset[str]]]  # path → (sha256, test files)
    unmeasured: Mapping[str, str]  # path → sha256 of a tracked file no test executed
    base_sha256: Mapping[str, str]  # path → sha256 of its content at the base (absent: not there)
    name: str = "coverage"
    lines: Mapping[str, FileLines] = field(default_factory=dict)  # path → the lines each context executed
    tests_ran: frozenset[str] = frozenset()  # a per-test map: the tests the base run ran (coverage.json)

    def tests_for(self, path: str) -> frozenset[str] | None:
        base = self.base_sha256.get(path)
        if base is None:
            return None
        entry = self.executed_by.get(path)
        if entry is not None:
            return entry[1] if entry[0] == base else None
        return frozenset() if self.unmeasured.get(path) == base else None

    @property
    def measured_tests(self) -> frozenset[str]:
        """Every test file with a context in the map (one absent ran nothing measured: skipped, or new)."""
        return frozenset(t for entry in self.executed_by.values() for t in entry[1])

    def narrow(self, path: str, confined: Confined) -> Narrowing | str:
        """The test files that executed the changed function bodies of ``path`` on the base, or why the map
        cannot say (stale, recorded without per-line contexts, or a body ran outside any test's context)."""
        base = self.base_sha256.get(path)
        entry = self.executed_by.get(path)
        if base is None or entry is None or entry[0] != base:
            return f"the coverage map has no fresh entry for {shown(path)}"
        recorded = self.lines.get(path)
        if recorded is None or recorded.unattributed is None:
            return "the coverage map does not record the lines run outside tests (re-collect it with this version)"
        names = _qualified(path, confined.functions)
        if any(recorded.unattributed.intersection(f.lines) for f in confined.functions):
            return f"{names} ran outside any test file on the base (at import, in a subprocess or a shared fixture)"
        tests = files_that_ran(confined.functions, recorded.test_files)
        if recorded.tests is None:
            return Narrowing(functions=names, tests=tests, measured=self.measured_tests)
        ran = RecordedTests.of(recorded.tests.ran(line for f in confined.functions for line in f.lines))
        return Narrowing(
            functions=names, tests=tests, measured=self.measured_tests, ran=ran, measured_ids=self.measured_ids
        )

    @cached_property
    def measured_ids(self) -> RecordedTests:
        """Every context of a per-test map (test ids, and test files for their module- and class-wide setup), and
        every test the base run ran: one that executed no measured line has no context, yet ran nothing changed."""
        return RecordedTests.of([*self.tests_ran, *(t for f in self.lines.values() for t in f.tests or ())])


def _qualified(path: str, functions: Iterable[FunctionBody]) -> str:
    module = shown(module_name(path))
    return ", ".join(f"`{module}.{f.qualname}`" for f in functions)


@dataclass(frozen=True)
class FileLines:
    """What one file's coverage entry says line by line: per test file the lines it executed, and the lines
    executed outside any test file's context (None: not recorded, an artifact older than that key)."""

    test_files: Mapping[str, frozenset[int]]
    unattributed: frozenset[int] | None
    tests: LineGroups | None = None  # per context (test id or test file), grouped; None: per file only


def coverage_lines(data: Mapping[str, Any]) -> dict[str, FileLines]:
    """Per file of a coverage.json ``coverage_entries`` accepted: the executed lines of each context (the
    compact ``contexts`` + ``context_lines`` of coverage/context_map.py, or an older artifact's ``tests``).
    A damaged compact map raises ``MapError`` naming the file: it cannot say which tests ran anything."""
    try:
        table = read_table(data["contexts"]) if "contexts" in data else None
    except ValueError as err:
        raise MapError(str(err)) from None
    found: dict[str, FileLines] = {}
    for path, entry in data["files"].items():
        try:
            tests = {str(t): frozenset(int(n) for n in lines) for t, lines in entry["test_files"].items()}
            raw = entry.get("unattributed_lines")
            unattributed = None if raw is None else frozenset(int(n) for n in raw)
            ids = _context_lines(entry, table)
        except (TypeError, ValueError, AttributeError) as err:
            if "context_lines" in entry:
                msg = f"files[{path!r}]: {err}"
                raise MapError(msg) from None
            continue  # not narrowable; the file-level answer stays
        found[str(path)] = FileLines(test_files=tests, unattributed=unattributed, tests=ids)
    return found


def _context_lines(entry: Mapping[str, Any], table: tuple[str, ...] | None) -> LineGroups | None:
    if "context_lines" in entry:
        if table is None:
            msg = "context_lines without the 'contexts' table"
            raise ValueError(msg)
        return decode(entry["context_lines"], table)
    raw = entry.get("tests")
    if raw is None:
        return None
    return from_tests(raw)


def tests_ran(data: Mapping[str, Any]) -> frozenset[str]:
    """coverage.json's ``tests_ran``, or ``tests_ran_contexts`` (numbers of the ``contexts`` table): none when
    absent or not a list of strings (nothing is vouched for); ``MapError`` for damaged numbers."""
    if "tests_ran_contexts" in data:
        try:
            return frozenset(names_at(data["tests_ran_contexts"], read_table(data.get("contexts"))))
        except ValueError as err:
            msg = f"tests_ran_contexts: {err}"
            raise MapError(msg) from None
    raw = data.get("tests_ran")
    return frozenset(raw) if isinstance(raw, list) and all(isinstance(t, str) for t in raw) else frozenset()


def coverage_entries(data: Any) -> tuple[dict[str, tuple[str, frozenset[str]]], dict[str, str]]:
    """The adapter over coverage.json's documented shape (docs/selection.md, "The maps"): per file its ``sha256``
    and ``test_files``; ``unmeasured`` files by sha256. Only a complete fold is usable: a partial one
    misses a shard's tests. Raises ``MapError`` naming the problem."""
    if not isinstance(data, Mapping) or data.get("schema") != COVERAGE_SCHEMA:
        msg = f"not a {COVERAGE_SCHEMA} file"
        raise MapError(msg)
    completeness = data.get("completeness")
    complete = data.get("state") == "complete" or (isinstance(completeness, Mapping) and completeness.get("complete"))
    if not complete:
        msg = "the coverage is partial (a shard's data is missing), so it cannot say which tests ran a file"
        raise MapError(msg)
    files = data.get("files")
    if not isinstance(files, Mapping):
        msg = "'files' is missing or not a mapping"
        raise MapError(msg)
    executed: dict[str, tuple[str, frozenset[str]]] = {}
    for path, entry in files.items():
        tests = entry.get("test_files") if isinstance(entry, Mapping) else None
        sha = entry.get("sha256") if isinstance(entry, Mapping) else None
        if not isinstance(tests, Mapping) or not isinstance(sha, str):
            msg = f"files[{path!r}] has no 'sha256' and 'test_files' (recorded without --coverage-map?)"
            raise MapError(msg)
        executed[str(path)] = (sha, frozenset(str(t) for t in tests))
    raw = data.get("unmeasured")
    unmeasured = {str(k): v for k, v in raw.items() if isinstance(v, str)} if isinstance(raw, Mapping) else {}
    return executed, unmeasured


def share(selected: Iterable[float], total: float) -> float:
    """``selected`` seconds as a share of ``total`` (0 when there is no time at all)."""
    value = sum(selected)
    return value / total if total > 0 and math.isfinite(total) else 0.0
