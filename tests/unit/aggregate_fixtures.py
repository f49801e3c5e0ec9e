"""Builders for real shard artifact folders (the files the runner writes), shared by the aggregate tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ci_shards.common.console import plural
from ci_shards.common.facts import RunnerFacts
from ci_shards.junit import write_junit
from ci_shards.model.failures import FailureKind, FailureRecord
from ci_shards.model.outcome import Attempt, CaseOutcome, CaseResult, Outcome, ShardStatus, shard_dir_name
from ci_shards.model.plan import Granularity, Plan, ShardPlan
from ci_shards.run.shard_output import write_outcome


def make_plan(shards: Sequence[Sequence[str]], granularity: Granularity = Granularity.TEST) -> Plan:
    return Plan(
        total=len(shards),
        granularity=granularity,
        shards=tuple(
            ShardPlan(index=i, items=tuple(items), estimated_seconds=2.0 * len(items) + i)
            for i, items in enumerate(shards, 1)
        ),
        lower_bound_seconds=2.0,
        unknown_items=0,
        created_at="2026-11-30T00:00:00Z",
    )


def case_for(test_id: str, outcome: CaseOutcome = CaseOutcome.PASSED, **kw: Any) -> CaseResult:
    """A pytest-style case whose JUnit round-trips to ``test_id`` (``tests/test_a.py::TestK::test_x``)."""
    file, *rest = test_id.split("::")
    module = file.removesuffix(".py").replace("/", ".")
    classname = ".".join([module, *rest[:-1]])
    kw.setdefault("time", 1.5)
    if outcome.is_bad:
        kw.setdefault("message", f"assert 1 == 2 in {rest[-1]}")
        kw.setdefault("text", "Traceback (most recent call last):\n  ...\nAssertionError")
    return CaseResult(test_id=test_id, name=rest[-1], classname=classname, file=file, outcome=outcome, **kw)


def flaky_case(test_id: str) -> CaseResult:
    attempt = Attempt(outcome=CaseOutcome.FAILED, message="timing out on first try", text="trace", time=0.5)
    return case_for(test_id, attempts=(attempt,))


def write_shard(
    root: Path,
    plan: Plan,
    index: int,
    cases: Sequence[CaseResult] | None = None,
    *,
    status: ShardStatus | None = None,
    digest: str | None = None,
    attempt: int = 1,
    finished_at: str = "2026-11-30T01:00:00Z",
    elapsed: float | None = None,
    failures: Sequence[FailureRecord] | None = None,
    folder_name: str | None = None,
    collect_seconds: Mapping[str, float] | None = None,
) -> Path:
    """A shard folder like the runner writes it. ``cases`` defaults to every planned item passing."""
    folder = root / (folder_name or shard_dir_name(index, plan.total))
    folder.mkdir(parents=True, exist_ok=True)
    if cases is None:
        cases = [case_for(item) for item in plan.shard(index).items]
    bad = [c for c in cases if c.outcome.is_bad]
    if status is None:
        status = ShardStatus.FAILED if bad else (ShardStatus.PASSED if cases else ShardStatus.EMPTY)
    outcome = Outcome(
        plan_digest=digest or plan.digest,
        shard_index=index,
        shard_total=plan.total,
        status=status,
        reason="" if status is ShardStatus.PASSED else f"{plural(len(bad), 'test')} failed",
        exit_code=1 if bad else 0,
        started_at="2026-11-30T00:59:00Z",
        finished_at=finished_at,
        elapsed_seconds=elapsed if elapsed is not None else sum(c.time for c in cases) + 0.5,
        planned_items=len(plan.shard(index).items),
        executed_tests=len(cases),
        passed=sum(c.outcome is CaseOutcome.PASSED for c in cases),
        failed=sum(c.outcome is CaseOutcome.FAILED for c in cases),
        errors=sum(c.outcome is CaseOutcome.ERROR for c in cases),
        runner=RunnerFacts(os="Linux", python="3.11", ci_run_attempt=attempt),
        collect_seconds=dict(collect_seconds or {}),
    )
    write_junit(cases, folder / "junit.xml", suite_name=f"shard-{index}")
    if failures is None:
        failures = [
            FailureRecord(
                shard=index,
                test_id=c.test_id,
                kind=FailureKind.ERROR if c.outcome is CaseOutcome.ERROR else FailureKind.FAILED,
                message=c.message,
                file=c.file,
                classname=c.classname,
                name=c.name,
                text=c.text,
                duration=c.time,
            )
            for c in bad
        ]
    (folder / "output.log").write_text("collected\n", encoding="utf-8")
    write_outcome(folder, outcome, failures)  # the runner's own writer
    return folder


def write_all(root: Path, plan: Plan) -> None:
    for shard in plan.shards:
        write_shard(root, plan, shard.index)
