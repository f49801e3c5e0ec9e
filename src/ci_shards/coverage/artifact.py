"""``coverage.json`` (``ci-shards/coverage@1``): the folded coverage of every shard, and how complete it is.

Pure data: frozen dataclasses, their JSON form, the totals and the completeness label. Lines are
1-based; paths are POSIX, relative to the source root (the repository).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Final

from ci_shards.common.json_text import indented
from ci_shards.coverage import context_map
from ci_shards.coverage.context_map import LineGroups

SCHEMA: Final = "ci-shards/coverage@1"
# the context of session- and package-scoped fixtures' setup (pytest_map): code run for every later test
# file, like collection's empty context, so it is attributed to no test file (``unattributed_lines``)
SHARED_CONTEXT: Final = "ci-shards:shared-fixture"
RECOLLECT: Final = (
    "re-collect: `ci-shards local --pytest --coverage` here, or re-run the CI workflow with `coverage: true`"
)


class ShardState(Enum):
    """What one planned shard gave the fold. Only ``folded`` and ``empty`` keep the result complete."""

    FOLDED = "folded"
    EMPTY = "empty"  # nothing planned (or skipped by a change-based selection): nothing to measure
    NEVER_STARTED = "never-started"
    INCOMPLETE = "incomplete"  # timed out / cancelled / tests not run: its data misses those tests
    NO_COVERAGE = "no-coverage"  # ran without --coverage
    LOST = "lost"  # ran with --coverage, but its data is missing or unreadable
    CORRUPT = "corrupt"  # its data files cannot be read or combined at fold time

    @property
    def counts(self) -> bool:
        return self in (ShardState.FOLDED, ShardState.EMPTY)


@dataclass(frozen=True, kw_only=True)
class ShardCoverage:
    index: int
    state: ShardState
    detail: str = ""

    def describe(self) -> str:
        words = {
            ShardState.NEVER_STARTED: "never started",
            ShardState.INCOMPLETE: "incomplete",
            ShardState.NO_COVERAGE: "ran without --coverage",
            ShardState.LOST: "lost its coverage",
            ShardState.CORRUPT: "coverage data unreadable",
        }.get(self.state, self.state.value)
        return f"shard {self.index} {words}" + (f": {self.detail}" if self.detail else "")


@dataclass(frozen=True, kw_only=True)
class Completeness:
    total: int
    shards: tuple[ShardCoverage, ...]

    @property
    def counted(self) -> int:
        return sum(s.state.counts for s in self.shards)

    @property
    def complete(self) -> bool:
        return self.counted == self.total

    @property
    def missing(self) -> tuple[ShardCoverage, ...]:
        return tuple(s for s in self.shards if not s.state.counts)

    def label(self, commit: str = "") -> str:
        """``complete (4/4 shards) @abc1234`` or ``partial (3/4 — shard 2 never started)``."""
        if self.complete:
            return f"complete ({self.counted}/{self.total} shards)" + (f" @{commit[:12]}" if commit else "")
        return f"partial ({self.counted}/{self.total} — {'; '.join(s.describe() for s in self.missing)})"

    def to_json(self) -> dict[str, Any]:
        return {
            "complete": self.complete,
            "total": self.total,
            "counted": self.counted,
            "shards": [{"index": s.index, "state": s.state.value, "detail": s.detail} for s in self.shards],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Completeness:
        shards = tuple(
            ShardCoverage(index=int(s["index"]), state=ShardState(s["state"]), detail=str(s.get("detail", "")))
            for s in data["shards"]
        )
        return cls(total=int(data["total"]), shards=shards)


@dataclass(frozen=True, kw_only=True)
class Function:
    name: str
    start: int
    end: int


Arc = tuple[int, int]


@dataclass(frozen=True, kw_only=True)
class FileCoverage:
    path: str
    sha256: str
    executed: tuple[int, ...]
    missed: tuple[int, ...]
    excluded: Mapping[int, str] = field(default_factory=dict)  # line -> why it is excluded
    branches_executed: tuple[Arc, ...] | None = None  # None: branches not measured
    branches_missed: tuple[Arc, ...] | None = None
    functions: tuple[Function, ...] = ()
    test_files: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # test file -> lines it executed
    shards: tuple[int, ...] = ()
    # with the map: lines executed outside any test file's context (collection, imports, subprocesses,
    # shared fixtures); None without the map (and in artifacts written before this key)
    unattributed: tuple[int, ...] | None = None
    # with the map: per context the lines it executed, a test's node id (``f.py::t[1]``) or a test file
    # (``f.py``: the setup of module- and class-scoped fixtures, or a map recorded per test file), grouped by
    # equal line sets against the artifact's context table (context_map); None without the map
    context_lines: LineGroups | None = None

    @property
    def statements(self) -> int:
        return len(self.executed) + len(self.missed)

    def function_at(self, line: int) -> Function | None:
        """The innermost function whose lines span ``line``."""
        around = [f for f in self.functions if f.start <= line <= f.end]
        return min(around, key=lambda f: (f.end - f.start, -f.start), default=None)

    def tests_at(self, line: int) -> list[str]:
        return sorted(t for t, lines in self.test_files.items() if line in lines)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "sha256": self.sha256,
            "executed_lines": list(self.executed),
            "missed_lines": list(self.missed),
            "excluded_lines": {str(k): v for k, v in sorted(self.excluded.items())},
            "functions": [{"name": f.name, "start": f.start, "end": f.end} for f in self.functions],
            "test_files": {t: list(lines) for t, lines in sorted(self.test_files.items())},
            "shards": list(self.shards),
        }
        if self.unattributed is not None:
            data["unattributed_lines"] = list(self.unattributed)
        if self.context_lines is not None:
            data["context_lines"] = context_map.encode(self.context_lines)
        if self.branches_executed is not None and self.branches_missed is not None:
            data["branches"] = {
                "executed": [list(a) for a in self.branches_executed],
                "missed": [list(a) for a in self.branches_missed],
            }
        return data

    @classmethod
    def from_json(cls, path: str, data: Mapping[str, Any], contexts: Sequence[str] = ()) -> FileCoverage:
        """``contexts``: the artifact's context table (``context_lines`` numbers it). A file written before the
        table (``tests``: every context's lines) is grouped against ``contexts`` too."""
        branches = data.get("branches")
        unattributed = data.get("unattributed_lines")
        if "context_lines" in data:
            grouped: LineGroups | None = context_map.decode(data["context_lines"], contexts)
        elif data.get("tests") is not None:
            grouped = context_map.from_tests(data["tests"], contexts)
        else:
            grouped = None
        return cls(
            path=path,
            sha256=str(data["sha256"]),
            executed=tuple(int(n) for n in data["executed_lines"]),
            missed=tuple(int(n) for n in data["missed_lines"]),
            excluded={int(k): str(v) for k, v in data.get("excluded_lines", {}).items()},
            branches_executed=_arcs(branches["executed"]) if branches else None,
            branches_missed=_arcs(branches["missed"]) if branches else None,
            functions=tuple(
                Function(name=str(f["name"]), start=int(f["start"]), end=int(f["end"]))
                for f in data.get("functions", ())
            ),
            test_files={str(t): tuple(int(n) for n in lines) for t, lines in data.get("test_files", {}).items()},
            shards=tuple(int(s) for s in data.get("shards", ())),
            unattributed=None if unattributed is None else tuple(int(n) for n in unattributed),
            context_lines=grouped,
        )


def _arcs(raw: Sequence[Sequence[int]]) -> tuple[Arc, ...]:
    return tuple((int(a), int(b)) for a, b in raw)


@dataclass(frozen=True, kw_only=True)
class Totals:
    statements: int
    executed: int
    branches: int
    branches_executed: int

    @property
    def ratio(self) -> float:
        """coverage.py's figure: (executed lines + executed branches) / (statements + branches)."""
        whole = self.statements + self.branches
        return (self.executed + self.branches_executed) / whole if whole else 1.0

    @classmethod
    def of(cls, files: Sequence[FileCoverage]) -> Totals:
        return cls(
            statements=sum(f.statements for f in files),
            executed=sum(len(f.executed) for f in files),
            branches=sum(len(f.branches_executed or ()) + len(f.branches_missed or ()) for f in files),
            branches_executed=sum(len(f.branches_executed or ()) for f in files),
        )


@dataclass(frozen=True, kw_only=True)
class CoverageArtifact:
    created_at: str
    commit: str
    plan_digest: str
    tool: str
    tool_version: str
    branch: bool
    completeness: Completeness
    files: tuple[FileCoverage, ...]
    unmeasured: Mapping[str, str] | None = None  # tracked source files nobody executed: path -> sha256
    notes: tuple[str, ...] = ()
    # with the map: the tests the folded shards' junit.xml reports as run (not skipped), so a selection knows
    # a test that executed none of the measured lines from one the base run never had; None: not recorded
    tests_ran: tuple[str, ...] | None = None
    contexts: tuple[str, ...] | None = None  # with the map: the context table the files' context_lines number

    @property
    def label(self) -> str:
        return self.completeness.label(self.commit)

    @property
    def totals(self) -> Totals:
        return Totals.of(self.files)

    @property
    def percent(self) -> float | None:
        """The project's percentage, or None: a partial result never has one."""
        return round(100 * self.totals.ratio, 2) if self.completeness.complete else None

    def file(self, path: str) -> FileCoverage | None:
        return next((f for f in self.files if f.path == path), None)

    def to_json(self) -> dict[str, Any]:
        t = self.totals
        return {
            "schema": SCHEMA,
            "created_at": self.created_at,
            "commit": self.commit,
            "plan_digest": self.plan_digest,
            "tool": {"name": self.tool, "version": self.tool_version},
            "branch": self.branch,
            "state": "complete" if self.completeness.complete else "partial",
            "label": self.label,
            "completeness": self.completeness.to_json(),
            "totals": {
                "statements": t.statements,
                "executed_lines": t.executed,
                "branches": t.branches,
                "executed_branches": t.branches_executed,
                "percent": self.percent,
            },
            "files": {f.path: self._on_table(f).to_json() for f in sorted(self.files, key=lambda f: f.path)},
            "unmeasured": None if self.unmeasured is None else dict(sorted(self.unmeasured.items())),
            "notes": list(self.notes),
        } | self._table_json()

    def _table_json(self) -> dict[str, Any]:
        """The context table (front-coded) and ``tests_ran`` as its numbers (``tests_ran_contexts``), or
        ``tests_ran`` as names when some are not in the table (or there is none)."""
        found: dict[str, Any] = {}
        position = {name: i for i, name in enumerate(self.contexts or ())}
        if self.contexts is not None:
            found["contexts"] = context_map.front_coded(self.contexts)
        if self.tests_ran is not None:
            if all(t in position for t in self.tests_ran):
                found["tests_ran_contexts"] = context_map.ranges_text(position[t] for t in self.tests_ran)
            else:
                found["tests_ran"] = sorted(self.tests_ran)
        return found

    def _on_table(self, file: FileCoverage) -> FileCoverage:
        """``file`` with its context_lines numbering this artifact's table (one built elsewhere is regrouped)."""
        groups = file.context_lines
        if groups is None or self.contexts is None or tuple(groups.names) == self.contexts:
            return file
        return replace(file, context_lines=context_map.group(groups.expand(), self.contexts))

    def dumps(self) -> str:
        return indented(self.to_json(), 1) + "\n"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CoverageArtifact:
        if data.get("schema") != SCHEMA:
            msg = f"schema is {data.get('schema')!r}, expected {SCHEMA!r}"
            raise ValueError(msg)
        unmeasured = data.get("unmeasured")
        table = context_map.read_table(data["contexts"]) if "contexts" in data else _old_table(data["files"])
        return cls(
            created_at=str(data["created_at"]),
            commit=str(data.get("commit", "")),
            plan_digest=str(data.get("plan_digest", "")),
            tool=str(data["tool"]["name"]),
            tool_version=str(data["tool"].get("version", "")),
            branch=bool(data.get("branch", False)),
            completeness=Completeness.from_json(data["completeness"]),
            files=tuple(FileCoverage.from_json(p, f, table or ()) for p, f in data["files"].items()),
            unmeasured=None if unmeasured is None else {str(k): str(v) for k, v in unmeasured.items()},
            notes=tuple(str(n) for n in data.get("notes", ())),
            tests_ran=_tests_ran(data, table),
            contexts=table,
        )


def _tests_ran(data: Mapping[str, Any], table: Sequence[str] | None) -> tuple[str, ...] | None:
    if "tests_ran_contexts" in data:
        return context_map.names_at(data["tests_ran_contexts"], table or ())
    return None if data.get("tests_ran") is None else tuple(str(t) for t in data["tests_ran"])


def _old_table(files: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The context table of an artifact written before it (every file's ``tests`` keys), None without them."""
    names = [str(t) for f in files.values() if isinstance(f.get("tests"), Mapping) for t in f["tests"]]
    return context_map.table(names) if names else None
