"""Test history: per test, its outcomes in the last runs, kept as the ``outcomes`` section of the timings store.

The section is a table: ``runs`` (oldest first: run id, commit, branch, date) and, per test, one
character per run aligned with ``runs`` (``p`` passed, ``f`` failed, ``e`` error, ``k`` flaky,
``s`` skipped, ``.`` no result in that run). So a test holds at most ``MAX_RUNS`` outcomes, the
whole section at most ``MAX_CELLS`` characters (the oldest runs go first), and runs older than
``MAX_AGE_DAYS`` are pruned (docs/aggregate.md, "Test history").

``History`` and its ``record``/``to_json``/``from_json`` are pure; ``read_history`` is the thin
edge, which never fails a run: a store it cannot read is a warning and an empty history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from enum import Enum
from pathlib import Path
from typing import Any, Final

from ci_shards.common import json_text
from ci_shards.judge import is_shard_case
from ci_shards.model.outcome import CaseOutcome, CaseResult

SECTION: Final = "outcomes"  # the key of the timings store that holds the history
MAX_RUNS: Final = 30  # outcomes kept per test (one per run)
MAX_CELLS: Final = 4_000_000  # tests x runs; ~4 MB of store at most, whatever the suite's size
MAX_AGE_DAYS: Final = 90
ABSENT: Final = "."
DATE_FORMAT: Final = "%Y-%m-%dT%H:%M:%SZ"


class Mark(str, Enum):
    """One test's outcome in one run, as one character of the store."""

    PASSED = "p"
    FAILED = "f"
    ERROR = "e"
    FLAKY = "k"  # failed, then passed on a re-run of the same run
    SKIPPED = "s"

    @property
    def is_bad(self) -> bool:
        return self in (Mark.FAILED, Mark.ERROR)

    @property
    def passed(self) -> bool:
        return self in (Mark.PASSED, Mark.FLAKY)


_MARKS: Final = {m.value: m for m in Mark}


@dataclass(frozen=True, kw_only=True)
class RunInfo:
    run: str  # the CI run id (with its attempt), or "local-<date>"
    commit: str
    branch: str
    date: datetime  # when aggregate recorded it, UTC

    def to_json(self) -> dict[str, str]:
        return {"run": self.run, "commit": self.commit, "branch": self.branch, "date": format_date(self.date)}


def format_date(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime(DATE_FORMAT)


def parse_date(text: object) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.strptime(text, DATE_FORMAT).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


@dataclass(frozen=True)
class History:
    runs: tuple[RunInfo, ...] = ()
    tests: Mapping[str, str] = field(default_factory=dict)  # test id → one character per run, aligned with runs

    def outcomes(self, test_id: str) -> list[tuple[RunInfo, Mark]]:
        """The test's results, oldest first (runs in which it has none are left out)."""
        row = self.tests.get(test_id, "")
        return [(run, _MARKS[ch]) for run, ch in zip(self.runs, row, strict=False) if ch in _MARKS]

    def record(
        self,
        run: RunInfo,
        marks: Mapping[str, Mark],
        *,
        max_runs: int = MAX_RUNS,
        max_cells: int = MAX_CELLS,
        max_age_days: int = MAX_AGE_DAYS,
    ) -> History:
        """A new history with ``run`` appended, then pruned: runs older than ``max_age_days`` before
        ``run``, beyond the last ``max_runs``, and the oldest while tests x runs exceeds ``max_cells``;
        a test with no result left is dropped."""
        runs = (*self.runs, run)
        rows = {t: row.ljust(len(self.runs), ABSENT) + marks.get(t, ABSENT) for t, row in self.tests.items()}
        for test_id in marks.keys() - rows.keys():
            rows[test_id] = ABSENT * len(self.runs) + marks[test_id]
        oldest = run.date - timedelta(days=max_age_days)
        drop = max(len(runs) - max_runs, sum(1 for r in runs[:-1] if r.date < oldest))
        while drop < len(runs) - 1 and len(rows) * (len(runs) - drop) > max_cells:
            drop += 1
        return _pruned(runs[drop:], {t: row[drop:] for t, row in rows.items()})

    def to_json(self) -> dict[str, Any]:
        return {"runs": [r.to_json() for r in self.runs], "tests": dict(sorted(self.tests.items()))}


def _pruned(runs: tuple[RunInfo, ...], rows: Mapping[str, str]) -> History:
    return History(runs=runs, tests={t: row for t, row in rows.items() if row.strip(ABSENT)})


def from_json(data: object, source: str) -> tuple[History, list[str]]:
    """The section as read from a store; what is malformed is dropped and said in a warning (the
    history informs the report, it never blocks a run)."""
    if data is None:
        return History(), []
    if not isinstance(data, Mapping) or not isinstance(data.get("runs"), list):
        return History(), [f"{source}: the '{SECTION}' section is malformed; starting an empty test history"]
    keep: list[int] = []
    runs: list[RunInfo] = []
    for position, raw in enumerate(data["runs"]):
        date = parse_date(raw.get("date")) if isinstance(raw, Mapping) else None
        if date is None:
            continue
        keep.append(position)
        runs.append(
            RunInfo(
                run=str(raw.get("run", "")),
                commit=str(raw.get("commit", "")),
                branch=str(raw.get("branch", "")),
                date=date,
            )
        )
    raw_tests = data.get("tests")
    tests = raw_tests if isinstance(raw_tests, Mapping) else {}
    rows = {
        str(t): "".join(row[i] if i < len(row) and row[i] in _MARKS else ABSENT for i in keep)
        for t, row in tests.items()
        if isinstance(row, str)
    }
    dropped = len(data["runs"]) - len(runs)
    warnings = [f"{source}: skipped {dropped} run(s) of the test history without a valid date"] if dropped else []
    return _pruned(tuple(runs), rows), warnings


def marks_of(cases: Iterable[CaseResult]) -> dict[str, Mark]:
    """This run's mark per test (the runner's own shard-level cases are no tests); a test reported
    twice keeps its worst result."""
    result: dict[str, Mark] = {}
    for case in cases:
        if is_shard_case(case):
            continue
        mark = _mark(case)
        if case.test_id not in result or _rank(mark) > _rank(result[case.test_id]):
            result[case.test_id] = mark
    return result


def _mark(case: CaseResult) -> Mark:
    if case.flaky:
        return Mark.FLAKY
    return {
        CaseOutcome.PASSED: Mark.PASSED,
        CaseOutcome.FAILED: Mark.FAILED,
        CaseOutcome.ERROR: Mark.ERROR,
        CaseOutcome.SKIPPED: Mark.SKIPPED,
    }[case.outcome]


def _rank(mark: Mark) -> int:
    return "skpfe".index(mark.value)


# --------------------------------------------------------------------------------------------
# the edge


def read_history(path: Path | None) -> tuple[History, list[str]]:
    """The history section of the store at ``path``: empty when there is no file or no section (a
    store written before the history existed); an unreadable file is a warning."""
    if path is None or not path.is_file():
        return History(), []
    try:
        data = json_text.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as err:
        return History(), [f"{path}: cannot read the test history ({err}); treating it as empty"]
    return from_json(data.get(SECTION) if isinstance(data, dict) else None, str(path))
