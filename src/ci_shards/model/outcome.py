"""A shard's outcome.json (``ci-shards/outcome@1``) and the normalised test results: how a shard ended
(``ShardStatus``), one test case (``CaseResult``, its ``Attempt``s) and the counts (``Totals``)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any, Final

from ci_shards.common.console import plural
from ci_shards.common.errors import as_written
from ci_shards.common.facts import RunnerFacts
from ci_shards.common.json_text import indented
from ci_shards.model.fields import require, round_seconds, whole

OUTCOME_SCHEMA: Final = "ci-shards/outcome@1"
RESULTS_DIR: Final = "ci-shards-results"


def shard_dir_name(index: int, total: int) -> str:
    """Folder name of one shard's artifacts: ``shard-<i>-of-<n>`` (1-based, docs/run.md)."""
    return f"shard-{index}-of-{total}"


class ShardStatus(str, Enum):
    """How one shard ended (docs/run.md, "Status")."""

    PASSED = "passed"
    FAILED = "failed"
    TIMED_OUT = "timed-out"
    NEVER_STARTED = "never-started"
    CANCELLED = "cancelled"
    ERROR = "error"
    EMPTY = "empty"
    SKIPPED_BY_DIFF = "skipped-by-diff"

    @property
    def is_success(self) -> bool:
        return self in _SUCCESS_STATUSES


_SUCCESS_STATUSES: Final = frozenset({ShardStatus.PASSED, ShardStatus.EMPTY, ShardStatus.SKIPPED_BY_DIFF})


class CaseOutcome(str, Enum):
    """The result of one test case, most severe last (ERROR > FAILED > PASSED > SKIPPED)."""

    SKIPPED = "skipped"
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"

    @property
    def severity(self) -> int:
        return _SEVERITY[self]

    @property
    def is_bad(self) -> bool:
        return self in (CaseOutcome.FAILED, CaseOutcome.ERROR)


_SEVERITY: Final = {CaseOutcome.SKIPPED: 0, CaseOutcome.PASSED: 1, CaseOutcome.FAILED: 2, CaseOutcome.ERROR: 3}


@dataclass(frozen=True, kw_only=True)
class Attempt:
    """One earlier run of a test that was re-run (Surefire's flaky*/rerun* elements)."""

    outcome: CaseOutcome
    message: str = ""
    type: str = ""
    text: str = ""
    time: float = 0.0


# a <testcase>'s identity as its producer wrote it, kept exactly by every JUnit ci-shards writes
# (tools such as EnricoMi's and dorny's reporters, Jenkins and GitLab key test history on them)
JUNIT_IDENTITY_ATTRS: Final = ("classname", "class", "name", "file", "line")
MAX_TEST_SECONDS: Final = 86_400.0  # one test over a day is a broken clock or producer, not a measurement
XFAILED_TYPE: Final = "pytest.xfail"  # what pytest's --junitxml writes as the type of an xfailed test's <skipped>
XPASSED_TYPE: Final = "pytest.xpass"  # a non-strict xfail that passed (pytest's JUnit cannot tell it from a pass)
# a planned item pytest's own rules did not collect (the project's collect_ignore, a file without tests,
# the command's -k/-m): written as a <skipped> so the item is accounted for, but a note, never a test
LEFT_OUT_TYPE: Final = "ci-shards.left-out"
# a collector pytest skipped (a module's pytest.importorskip or pytest.skip(allow_module_level=True), a conftest.py
# that skips its folder): one skipped test, as pytest's summary line and its --junitxml count it
COLLECTOR_SKIPPED_TYPE: Final = "ci-shards.collector-skipped"
# a module that failed to collect (an import or syntax error): one error, as pytest counts it, but not a test
COLLECTION_ERROR_TYPE: Final = "collection error"
# why a planned item was left out, in the words ci-shards adds (a left-out item under a skipped folder carries
# pytest's own reason instead); the case's type, not these words, tells a left-out item from a test
IGNORED_REASON: Final = (
    "left out by the project's collect_ignore, --ignore, norecursedirs or pytest_ignore_collect (its own run does"
    " not collect it)"
)
NO_TESTS_REASON: Final = "the file holds no tests"
# a planned test id (a discovery plan's, from timings) that its file, collected without error, no longer holds
NOT_IN_FILE_REASON: Final = "its file, collected without error, holds no such test now (deleted or renamed)"
SKIPPED_AT_COLLECTION: Final = "skipped at collection: "
DESELECTED_MESSAGE: Final = "deselected by the command's own filters"


def usable_seconds(value: object) -> float | None:
    """A duration we can use, or None (bool, negative, NaN, infinite, over a day and non-numbers
    are not: ``MAX_TEST_SECONDS``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    if not math.isfinite(number) or number < 0 or number > MAX_TEST_SECONDS:
        return None
    return number


def seconds_by_file(raw: object) -> dict[str, float]:
    """``{file: seconds}`` as written, keeping only usable seconds (read defensively: a damaged value
    loses that file's figure, never the shard's results)."""
    if not isinstance(raw, Mapping):
        return {}
    usable = ((str(file), usable_seconds(seconds)) for file, seconds in raw.items())
    return {file: seconds for file, seconds in usable if seconds is not None}


@dataclass(frozen=True, kw_only=True)
class CaseResult:
    """One logical test and its final result.

    ``test_id`` is the identity used for accounting: the pytest node id when it can be derived,
    else ``file::classname::name`` / ``classname::name``. ``attempts`` holds earlier failed runs:
    when the final ``outcome`` is PASSED and attempts exist, the test is flaky.
    """

    test_id: str
    name: str
    classname: str = ""
    file: str | None = None
    line: int | None = None
    outcome: CaseOutcome = CaseOutcome.PASSED
    time: float = 0.0
    message: str = ""
    type: str = ""
    text: str = ""
    system_out: str = ""
    system_err: str = ""
    attempts: tuple[Attempt, ...] = ()
    # the report gave an implausible time (over MAX_TEST_SECONDS): ``time`` is 0 and the timings
    # store records nothing for this test
    time_invalid: bool = False
    # the JUNIT_IDENTITY_ATTRS its producer wrote, as written (pytest's 0-based ``line`` included);
    # empty for cases ci-shards made up (never run, killed), which are written from the fields above
    junit_attrs: tuple[tuple[str, str], ...] = ()

    # Both cached on the (frozen) instance: a report's every case is asked several times per stage (totals, the
    # JUnit writer, the judge), 2.2 million calls for aggregate's 100,000-case tests, a tenth of their CPU.
    @cached_property
    def flaky(self) -> bool:
        return self.outcome is CaseOutcome.PASSED and any(a.outcome.is_bad for a in self.attempts)

    @cached_property
    def counted_as(self) -> str:
        """The outcome as pytest's summary line counts it: ``passed``, ``failed``, ``error``, ``skipped``,
        ``xfailed``, ``xpassed`` (pytest's own words, each its own count), or ``left-out`` (no test)."""
        if self.type == LEFT_OUT_TYPE and self.outcome is CaseOutcome.SKIPPED:
            return LEFT_OUT
        if self.type == XFAILED_TYPE and self.outcome is CaseOutcome.SKIPPED:
            return "xfailed"
        if self.type == XPASSED_TYPE and self.outcome is CaseOutcome.PASSED:
            return "xpassed"
        return self.outcome.value


LEFT_OUT: Final = "left-out"


def in_pytests_junit(case: CaseResult) -> bool:
    """Whether pytest's own --junitxml has an element for ``case``: every test, and a collector that skipped
    (``COLLECTOR_SKIPPED_TYPE``: pytest writes it as a skipped testcase); not a planned item pytest's rules left
    out (a file that holds no tests or the project ignores, the tests the command deselects, the files of a
    skipped folder), which a shard's junit.xml keeps only to account for its plan."""
    return case.counted_as != LEFT_OUT


@dataclass(frozen=True, kw_only=True)
class Totals:
    """The counts of a set of test cases, one per logical test (never per result element): the one
    counting shared by the shard's outcome.json, the JUnit writer's attributes and the verdict.

    Counted as pytest counts them (``1 failed, 1376 passed, 8 skipped, 1 xfailed``): xfailed and
    xpassed are outcomes of their own, not in ``skipped``/``passed``, and a planned item pytest's own
    rules left out (``LEFT_OUT_TYPE``) is no test: it is in ``left_out`` only."""

    tests: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    xfailed: int = 0
    xpassed: int = 0
    flaky: int = 0
    left_out: int = 0
    time: float = 0.0

    @classmethod
    def of(cls, cases: Iterable[CaseResult]) -> Totals:
        counts: Counter[str] = Counter()
        flaky = 0
        time = 0.0
        for case in cases:
            counts[case.counted_as] += 1
            flaky += case.flaky
            time += case.time
        return cls(
            tests=sum(counts.values()) - counts[LEFT_OUT],
            passed=counts["passed"],
            failed=counts["failed"],
            errors=counts["error"],
            skipped=counts["skipped"],
            xfailed=counts["xfailed"],
            xpassed=counts["xpassed"],
            flaky=flaky,
            left_out=counts[LEFT_OUT],
            time=time,
        )

    def counts_line(self) -> str:
        """``484 tests, 470 passed, 1 failed, 0 errors, 10 skipped, 2 xfailed, 1 xpassed``: every
        report's words for these counts (xfailed and xpassed, as pytest, only when there are any)."""
        line = f"{plural(self.tests, 'test')}, {self.passed} passed, {self.failed} failed, "
        line += f"{plural(self.errors, 'error')}, {self.skipped} skipped"
        return line + "".join(
            f", {n} {word}" for word, n in (("xfailed", self.xfailed), ("xpassed", self.xpassed)) if n
        )

    def to_json(self) -> dict[str, int | float]:
        """The totals as written to JSON (``junit summary --format json``, the verdict file)."""
        return {
            "tests": self.tests,
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "skipped": self.skipped,
            "xfailed": self.xfailed,
            "xpassed": self.xpassed,
            "flaky": self.flaky,
            "left_out": self.left_out,
            "time": round(self.time, 3),
        }


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What one shard's run amounted to (``outcome.json``)."""

    plan_digest: str
    shard_index: int
    shard_total: int
    status: ShardStatus
    reason: str = ""  # one line: why this status (empty for passed)
    exit_code: int | None = None
    signal: int | None = None
    started_at: str = ""
    finished_at: str = ""
    elapsed_seconds: float = 0.0
    planned_items: int = 0
    executed_tests: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0  # as pytest counts: xfailed and xpassed are counts of their own
    xfailed: int = 0
    xpassed: int = 0
    attempts: tuple[Mapping[str, Any], ...] = ()  # one entry per process run (first run, re-runs)
    flaky_tests: tuple[str, ...] = ()
    not_run: tuple[str, ...] = ()  # planned items never reported
    leaked_processes: tuple[str, ...] = ()
    log_tail: str = ""
    runner: RunnerFacts = field(default_factory=RunnerFacts)
    # False: --accept-exit-code without a usable report; the status comes from the exit code alone and
    # the shard's items could not be matched (judge.judge_shard lets that status stand)
    accounted: bool = True
    coverage: Mapping[str, Any] | None = None  # run --coverage: tool, version, source root, data files, problem
    # test file → seconds pytest took to collect it in the first run (with pytest-xdist, one worker's); the
    # shard's wall pays them outside its tests' times, and the timings store learns them (report/overhead.py)
    collect_seconds: Mapping[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": OUTCOME_SCHEMA,
            "plan_digest": self.plan_digest,
            "shard_index": self.shard_index,
            "shard_total": self.shard_total,
            "status": self.status.value,
            "reason": self.reason,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "elapsed_seconds": round_seconds(self.elapsed_seconds),
            "planned_items": self.planned_items,
            "executed_tests": self.executed_tests,
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "skipped": self.skipped,
            "xfailed": self.xfailed,
            "xpassed": self.xpassed,
            "attempts": [dict(a) for a in self.attempts],
            "flaky_tests": list(self.flaky_tests),
            "not_run": list(self.not_run),
            "leaked_processes": list(self.leaked_processes),
            "log_tail": self.log_tail,
            "runner": self.runner.to_json(),
            "accounted": self.accounted,
            **({"coverage": dict(self.coverage)} if self.coverage is not None else {}),
            **({"collect_seconds": dict(sorted(self.collect_seconds.items()))} if self.collect_seconds else {}),
        }

    def dumps(self) -> str:
        return indented(self.to_json(), 2) + "\n"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Outcome:
        schema = require(data, "schema")
        if schema != OUTCOME_SCHEMA:
            msg = f"schema is {as_written(schema)}, expected {as_written(OUTCOME_SCHEMA)}"
            raise ValueError(msg)
        elapsed = float(data.get("elapsed_seconds", 0.0))
        if not math.isfinite(elapsed):
            elapsed = 0.0
        return cls(
            plan_digest=str(require(data, "plan_digest")),
            shard_index=whole(data, "shard_index"),
            shard_total=whole(data, "shard_total"),
            status=ShardStatus(require(data, "status")),
            reason=str(data.get("reason", "")),
            exit_code=data.get("exit_code"),
            signal=data.get("signal"),
            started_at=str(data.get("started_at", "")),
            finished_at=str(data.get("finished_at", "")),
            elapsed_seconds=elapsed,
            planned_items=whole(data, "planned_items", 0),  # whole: int() of a JSON Infinity raised OverflowError
            executed_tests=whole(data, "executed_tests", 0),
            passed=whole(data, "passed", 0),
            failed=whole(data, "failed", 0),
            errors=whole(data, "errors", 0),
            skipped=whole(data, "skipped", 0),
            xfailed=whole(data, "xfailed", 0),
            xpassed=whole(data, "xpassed", 0),
            attempts=tuple(data.get("attempts", ())),
            flaky_tests=tuple(data.get("flaky_tests", ())),
            not_run=tuple(data.get("not_run", ())),
            leaked_processes=tuple(data.get("leaked_processes", ())),
            log_tail=str(data.get("log_tail", "")),
            runner=RunnerFacts.from_json(data.get("runner", {})),
            accounted=data.get("accounted", True) is not False,
            coverage=dict(data["coverage"]) if isinstance(data.get("coverage"), Mapping) else None,
            collect_seconds=seconds_by_file(data.get("collect_seconds")),
        )
