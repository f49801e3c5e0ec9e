"""The data every stage shares: items, plans, shard outcomes, test results, failure records.

These are the contracts between the stages in code (the files are described in docs/planning.md,
docs/run.md and docs/aggregate.md). Each type has a JSON form (``to_json`` / ``from_json``)
that is the file format; readers accept unknown keys (newer writers) and reject missing required
ones with a ``ValueError`` naming the key, which the IO edge turns into an ``InputError``.
Nothing here touches files, the clock or the environment.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Final

from ci_shards.console import plural
from ci_shards.errors import as_written
from ci_shards.facts import RunnerFacts

PLAN_SCHEMA: Final = "ci-shards/plan@1"
OUTCOME_SCHEMA: Final = "ci-shards/outcome@1"
FAILURE_SCHEMA: Final = "ci-shards/failure@1"
RESULTS_DIR: Final = "ci-shards-results"


def rfc3339(when: datetime) -> str:
    """A timestamp as written to files: UTC, whole seconds, ``Z`` (``2026-11-30T04:26:00Z``)."""
    return when.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def shard_dir_name(index: int, total: int) -> str:
    """Folder name of one shard's artifacts: ``shard-<i>-of-<n>`` (1-based, docs/run.md)."""
    return f"shard-{index}-of-{total}"


def item_file(item: str) -> str:
    """The file an item belongs to: the part before the first ``::``."""
    return item.split("::", 1)[0]


def item_candidates(test_id: str) -> list[str]:
    """Every item that would cover ``test_id``, most specific first (how aggregate decides that a planned item ran).

    ``f.py::C::t[a::b]`` → ``f.py::C::t[a::b]``, ``f.py::C::t``, ``f.py::C``, ``f.py``. The brackets of
    a parametrized id may hold anything, ``::`` and ``[`` included, so they are cut off before the id is
    split into its parts; a ``[`` in the file part (``tests/[x]/t.py``) is part of the path.
    """
    candidates = [test_id]
    sep = test_id.find("::")
    head = test_id
    if sep >= 0:
        bracket = test_id.find("[", sep)
        if bracket > 0:
            head = test_id[:bracket]
            candidates.append(head)
    parts = head.split("::")
    candidates.extend("::".join(parts[:end]) for end in range(len(parts) - 1, 0, -1))
    return list(dict.fromkeys(candidates))


def owning_item(test_id: str, planned: Container[str]) -> str | None:
    """The most specific planned item that covers ``test_id``, or None: the one matcher that run,
    aggregate and the pytest plugin all use to decide that a reported test belongs to a planned item."""
    for candidate in item_candidates(test_id):
        if candidate in planned:
            return candidate
    return None


class CommentMode(str, Enum):
    """When the PR comment is written (``aggregate --comment-mode``, ``comment --mode``)."""

    ALWAYS = "always"  # create or update on every run
    ON_FAILURE = "on-failure"  # create only when the run failed; an existing comment is always updated
    ON_CHANGE = "on-change"  # create or update only when the result differs from the comment's
    OFF = "off"


class Granularity(str, Enum):
    TEST = "test"
    FILE = "file"
    AUTO = "auto"


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


def _require(data: Mapping[str, Any], key: str) -> Any:
    if key not in data:
        msg = f"missing key {key!r}"
        raise ValueError(msg)
    return data[key]


def _whole(data: Mapping[str, Any], key: str, default: Any = None) -> int:
    """``data[key]`` as an int, or a ValueError in the file's words (not Python's "int() argument ... NoneType")."""
    value = _require(data, key) if default is None else data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().lstrip("-").isdigit():
        msg = f"{key!r} must be a whole number, not {as_written(value)}"
        raise ValueError(msg)
    return int(value)


def _seconds(data: Mapping[str, Any], key: str) -> float:
    value = data.get(key, 0.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        msg = f"{key!r} must be a number of seconds, not {as_written(value)}"
        raise ValueError(msg)
    return float(value)


def _granularity(value: Any) -> Granularity:
    try:
        return Granularity(value)
    except ValueError:
        msg = f"'granularity' must be one of {', '.join(g.value for g in Granularity)}, not {as_written(value)}"
        raise ValueError(msg) from None


def _optional_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        msg = f"{key!r} must be a string"
        raise ValueError(msg)
    return value


def _round_seconds(value: float) -> float:
    """Seconds as written to files: 3 decimals, so plans are byte-stable across platforms."""
    return round(float(value), 3)


# --------------------------------------------------------------------------------------------
# plan.json


@dataclass(frozen=True)
class ShardPlan:
    index: int  # 1-based
    items: tuple[str, ...]
    estimated_seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "items": list(self.items),
            "estimated_seconds": _round_seconds(self.estimated_seconds),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShardPlan:
        if not isinstance(data, Mapping):
            msg = f"each of 'shards' must be an object, not {as_written(data)}"
            raise ValueError(msg)
        items = _require(data, "items")
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            msg = "shard 'items' must be a list of strings"
            raise ValueError(msg)
        return cls(
            index=_whole(data, "index"),
            items=tuple(items),
            estimated_seconds=_seconds(data, "estimated_seconds"),
        )


@dataclass(frozen=True, kw_only=True)
class Plan:
    """A whole plan: which items each of ``total`` shards runs.

    ``digest`` covers everything except ``created_at`` and itself, so two plans made from the same
    inputs have the same digest even when made at different times.
    """

    total: int
    granularity: Granularity
    shards: tuple[ShardPlan, ...]
    lower_bound_seconds: float
    unknown_items: int
    created_at: str = ""
    files_cut: int = 0
    notes: tuple[str, ...] = ()
    # a pytest plan: the folder its items (pytest node ids) are relative to, POSIX and relative to the
    # working directory the plan was made in (so a CI checkout elsewhere still resolves it);
    # None: the items are relative to that working directory
    rootdir: str | None = None
    # slowest shard over the lower bound counting only measured seconds, when some items were guessed
    measured_ratio: float | None = None
    # the shard that runs tests in files no shard owns (new test files): ``pick_unowned_shard``;
    # 0 in a plan written before the field, where the same rule is applied on use (``ownership``)
    unowned_shard: int = 0

    # fixed seconds every shard with work pays besides its items (start-up, collection, session
    # fixtures), learned by aggregate; not in ``estimated_seconds``, which is the items' time
    shard_overhead_seconds: float = 0.0
    # pytest-xdist workers each shard was planned for (``--workers``): its ``estimated_seconds`` is the
    # makespan of its items over them (plan/workers.py); written only above 1, so older plans keep their digest
    workers: int = 1

    # change-based selection (docs/selection.md), each written only when non-empty so a plan from before
    # these fields keeps its digest: items left out by the diff → the rule that skipped each; in shadow
    # mode the items that would have been skipped (they are planned and run); the decision's lines
    skipped_by_diff: Mapping[str, str] = field(default_factory=dict)
    would_skip: Mapping[str, str] = field(default_factory=dict)
    selection: tuple[str, ...] = ()

    def content(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "schema": PLAN_SCHEMA,
            "total": self.total,
            "granularity": self.granularity.value,
            "shards": [s.to_json() for s in self.shards],
            "lower_bound_seconds": _round_seconds(self.lower_bound_seconds),
            "unknown_items": self.unknown_items,
            "files_cut": self.files_cut,
            "notes": list(self.notes),
        }
        if self.rootdir is not None:
            data["rootdir"] = self.rootdir
        if self.measured_ratio is not None:
            data["measured_ratio"] = round(self.measured_ratio, 3)
        if self.unowned_shard:  # absent when 0, so a plan from before the field keeps its digest
            data["unowned_shard"] = self.unowned_shard
        if self.shard_overhead_seconds:  # optional: plans without it keep their bytes and digest
            data["shard_overhead_seconds"] = _round_seconds(self.shard_overhead_seconds)
        if self.workers > 1:
            data["workers"] = self.workers
        for key, value in (("skipped_by_diff", self.skipped_by_diff), ("would_skip", self.would_skip)):
            if value:
                data[key] = dict(sorted(value.items()))
        if self.selection:
            data["selection"] = list(self.selection)
        return data

    @property
    def digest(self) -> str:
        canonical = json.dumps(self.content(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()

    @property
    def items(self) -> list[str]:
        return [item for shard in self.shards for item in shard.items]

    @property
    def estimated_makespan(self) -> float:
        return max((s.estimated_seconds for s in self.shards), default=0.0)

    def ownership(self) -> ShardOwnership:
        return ShardOwnership.of(self)

    def shard(self, index: int) -> ShardPlan:
        if not 1 <= index <= self.total:
            msg = f"shard {index} is not in 1..{self.total}"
            raise ValueError(msg)
        return self.shards[index - 1]

    def to_json(self) -> dict[str, Any]:
        data = self.content()
        data["digest"] = self.digest
        data["created_at"] = self.created_at
        return data

    def dumps(self) -> str:
        """plan.json's exact bytes: sorted keys, 2-space indent, trailing newline."""
        return json.dumps(self.to_json(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Plan:
        schema = _require(data, "schema")
        if schema != PLAN_SCHEMA:
            msg = f"schema is {as_written(schema)}, expected {as_written(PLAN_SCHEMA)}"
            raise ValueError(msg)
        listed = _require(data, "shards")
        if not isinstance(listed, list):
            msg = f"'shards' must be a list, not {as_written(listed)}"
            raise ValueError(msg)
        shards = tuple(ShardPlan.from_json(s) for s in listed)
        total = _whole(data, "total")
        if len(shards) != total or [s.index for s in shards] != list(range(1, total + 1)):
            msg = f"'shards' must hold shards 1..{total} in order"
            raise ValueError(msg)
        _check_items_unique(shards)
        plan = cls(
            total=total,
            granularity=_granularity(_require(data, "granularity")),
            shards=shards,
            lower_bound_seconds=_seconds(data, "lower_bound_seconds"),
            unknown_items=_whole(data, "unknown_items", 0),
            created_at=str(data.get("created_at", "")),
            files_cut=_whole(data, "files_cut", 0),
            notes=tuple(str(n) for n in data.get("notes", ())),
            rootdir=_optional_str(data, "rootdir"),
            measured_ratio=None if data.get("measured_ratio") is None else float(data["measured_ratio"]),
            unowned_shard=int(data.get("unowned_shard", 0)),
            shard_overhead_seconds=float(data.get("shard_overhead_seconds", 0.0)),
            skipped_by_diff=_rules(data, "skipped_by_diff"),
            would_skip=_rules(data, "would_skip"),
            selection=tuple(str(line) for line in data.get("selection", ())),
            workers=_whole(data, "workers", 1),
        )
        if plan.workers < 1:
            msg = f"'workers' is {plan.workers}, not a number of workers ≥ 1"
            raise ValueError(msg)
        if not 0 <= plan.unowned_shard <= total:
            msg = f"'unowned_shard' is {plan.unowned_shard}, not a shard of 1..{total}"
            raise ValueError(msg)
        if not (math.isfinite(plan.shard_overhead_seconds) and plan.shard_overhead_seconds >= 0):
            msg = "'shard_overhead_seconds' must be a non-negative number of seconds"
            raise ValueError(msg)
        both = sorted(set(plan.skipped_by_diff) & set(plan.items))
        if both:
            msg = f"item {both[0]!r} is both planned and in 'skipped_by_diff'"
            raise ValueError(msg)
        stated = data.get("digest")
        if stated is not None and stated != plan.digest:
            msg = "digest does not match the plan's content (the file was edited or corrupted)"
            raise ValueError(msg)
        return plan


def _rules(data: Mapping[str, Any], key: str) -> dict[str, str]:
    """``{item: rule}`` (``skipped_by_diff``, ``would_skip``); absent: empty."""
    value = data.get(key, {})
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        msg = f"{key!r} must map items to the rule that skipped them"
        raise ValueError(msg)
    return dict(value)


def _check_items_unique(shards: Sequence[ShardPlan]) -> None:
    """Every item is in exactly one shard, once (docs/rules.md): a plan that would run one twice is refused
    on load, before any CI time is spent, whatever its digest says (a digest is easily recomputed)."""
    owner: dict[str, int] = {}
    for shard in shards:
        for item in shard.items:
            first = owner.get(item)
            if first is not None:
                where = f"shards {first} and {shard.index}" if first != shard.index else f"shard {first} twice"
                msg = f"item {item!r} is in {where} (every item must be in exactly one shard, once)"
                raise ValueError(msg)
            owner[item] = shard.index


def pick_unowned_shard(shards: Sequence[ShardPlan]) -> int:
    """The shard that collects and runs test files no shard owns: the non-empty shard with the smallest
    estimate (it has the most room; an empty shard is not run at all), ties to the lowest index; 0
    when every shard is empty. Estimates are compared as written to plan.json, so the choice survives
    a round trip through the file."""
    busy = [s for s in shards if s.items]
    return min(busy, key=lambda s: (_round_seconds(s.estimated_seconds), s.index)).index if busy else 0


@dataclass(frozen=True)
class ShardOwnership:
    """Which shard runs a collected test (docs/rules.md), so that every test pytest
    collects runs in exactly one shard, planned or not:

    1. the shard of the planned item that covers it (``owning_item``: ``f.py::test_q`` covers
       ``f.py::test_q[a]``);
    2. else (a test the plan does not know) the shard that owns its file: the lowest shard index
       holding an item of that file, so a file split across shards has one owner;
    3. else (a file no shard owns) the plan's ``unowned_shard``.
    """

    item_shard: Mapping[str, int]
    file_shard: Mapping[str, int]
    unowned_shard: int

    @classmethod
    def of(cls, plan: Plan) -> ShardOwnership:
        item_shard = {item: s.index for s in plan.shards for item in s.items}
        file_shard: dict[str, int] = {}
        for shard in plan.shards:  # in index order: the first (lowest) shard of a file owns it
            for item in shard.items:
                file_shard.setdefault(item_file(item), shard.index)
        return cls(item_shard, file_shard, plan.unowned_shard or pick_unowned_shard(plan.shards))

    def planned_shard(self, test_id: str) -> int | None:
        """The shard of the planned item that covers ``test_id`` (rule 1), None for an unplanned test."""
        item = owning_item(test_id, self.item_shard)
        return None if item is None else self.item_shard[item]

    def unplanned_shard(self, test_id: str) -> int:
        """The shard that runs a test no planned item covers (rules 2 and 3)."""
        return self.file_shard.get(item_file(test_id), self.unowned_shard)

    def shard_of(self, test_id: str) -> int:
        planned = self.planned_shard(test_id)
        return self.unplanned_shard(test_id) if planned is None else planned


# --------------------------------------------------------------------------------------------
# Test results (the normalised form of a JUnit <testcase>)


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

    @property
    def flaky(self) -> bool:
        return self.outcome is CaseOutcome.PASSED and any(a.outcome.is_bad for a in self.attempts)

    @property
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


# --------------------------------------------------------------------------------------------
# failures.jsonl


class FailureKind(str, Enum):
    FAILED = "failed"
    ERROR = "error"
    TIMED_OUT = "timed-out"
    FLAKY = "flaky"
    NOT_RUN = "not-run"  # planned, never reported by the runner
    SHARD = "shard"  # a shard-level problem (no report, crash, leak, never started...)


@dataclass(frozen=True, kw_only=True)
class FailureRecord:
    shard: int
    test_id: str
    kind: FailureKind
    message: str
    file: str | None = None
    classname: str = ""
    name: str = ""
    text: str = ""
    attempts: int = 1
    duration: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": FAILURE_SCHEMA,
            "shard": self.shard,
            "test_id": self.test_id,
            "kind": self.kind.value,
            "message": self.message,
            "file": self.file,
            "classname": self.classname,
            "name": self.name,
            "text": self.text,
            "attempts": self.attempts,
            "duration": _round_seconds(self.duration),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FailureRecord:
        return cls(
            shard=int(_require(data, "shard")),
            test_id=str(_require(data, "test_id")),
            kind=FailureKind(_require(data, "kind")),
            message=str(data.get("message", "")),
            file=data.get("file"),
            classname=str(data.get("classname", "")),
            name=str(data.get("name", "")),
            text=str(data.get("text", "")),
            attempts=int(data.get("attempts", 1)),
            duration=float(data.get("duration", 0.0)),
        )


def dumps_jsonl(records: Iterable[FailureRecord]) -> str:
    return "".join(json.dumps(r.to_json(), sort_keys=True, ensure_ascii=False) + "\n" for r in records)


# --------------------------------------------------------------------------------------------
# outcome.json


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
            "elapsed_seconds": _round_seconds(self.elapsed_seconds),
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
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Outcome:
        schema = _require(data, "schema")
        if schema != OUTCOME_SCHEMA:
            msg = f"schema is {as_written(schema)}, expected {as_written(OUTCOME_SCHEMA)}"
            raise ValueError(msg)
        elapsed = float(data.get("elapsed_seconds", 0.0))
        if not math.isfinite(elapsed):
            elapsed = 0.0
        return cls(
            plan_digest=str(_require(data, "plan_digest")),
            shard_index=int(_require(data, "shard_index")),
            shard_total=int(_require(data, "shard_total")),
            status=ShardStatus(_require(data, "status")),
            reason=str(data.get("reason", "")),
            exit_code=data.get("exit_code"),
            signal=data.get("signal"),
            started_at=str(data.get("started_at", "")),
            finished_at=str(data.get("finished_at", "")),
            elapsed_seconds=elapsed,
            planned_items=int(data.get("planned_items", 0)),
            executed_tests=int(data.get("executed_tests", 0)),
            passed=int(data.get("passed", 0)),
            failed=int(data.get("failed", 0)),
            errors=int(data.get("errors", 0)),
            skipped=int(data.get("skipped", 0)),
            xfailed=int(data.get("xfailed", 0)),
            xpassed=int(data.get("xpassed", 0)),
            attempts=tuple(data.get("attempts", ())),
            flaky_tests=tuple(data.get("flaky_tests", ())),
            not_run=tuple(data.get("not_run", ())),
            leaked_processes=tuple(data.get("leaked_processes", ())),
            log_tail=str(data.get("log_tail", "")),
            runner=RunnerFacts.from_json(data.get("runner", {})),
            accounted=data.get("accounted", True) is not False,
            coverage=dict(data["coverage"]) if isinstance(data.get("coverage"), Mapping) else None,
        )


def parse_shard_spec(spec: str) -> tuple[int, int]:
    """``"I/N"`` → (I, N), 1-based. Raises ValueError with the reason for 0/4, 5/4, 2/0, "x"."""
    parts = spec.split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        msg = f"shard {spec!r} is not of the form I/N (e.g. 2/4)"
        raise ValueError(msg)
    index, total = (int(p) for p in parts)
    if total < 1:
        msg = f"shard {spec!r}: the total must be at least 1"
        raise ValueError(msg)
    if not 1 <= index <= total:
        msg = f"shard {spec!r}: the index must be between 1 and {total} (shards are 1-based)"
        raise ValueError(msg)
    return index, total
