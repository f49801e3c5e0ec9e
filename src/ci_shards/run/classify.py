"""Deciding what a shard's run amounted to: accounting against the plan, re-run merging, status.

Pure: the runner hands in what its processes did and what their reports said; this module says
which status the shard gets and why (issue 3, first match wins: never-started → timed-out →
cancelled → failed → passed; no items → empty), which test cases go into junit.xml (with
synthesised ones for tests killed in flight and planned items never reported, so nothing
vanishes) and which records go into failures.jsonl. The last word on the status is
``judge.judge_shard``, the rules aggregate applies to the same folder.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ci_shards.common.console import count_failures, fmt_duration, plural
from ci_shards.judge import (
    NO_REPORT_TYPE,
    NOT_RUN_TYPE,
    SHARD_CASE_CLASSNAME,
    TIMEOUT_TYPE,
    FlakyResult,
    failure_kind,
    judge_shard,
    verified,
)
from ci_shards.model.failures import FailureKind, FailureRecord
from ci_shards.model.matching import file_under, item_file, owning_item
from ci_shards.model.outcome import (
    COLLECTION_ERROR_TYPE,
    COLLECTOR_SKIPPED_TYPE,
    DESELECTED_MESSAGE,
    JUNIT_IDENTITY_ATTRS,
    LEFT_OUT_TYPE,
    SKIPPED_AT_COLLECTION,
    XFAILED_TYPE,
    XPASSED_TYPE,
    Attempt,
    CaseOutcome,
    CaseResult,
    ShardStatus,
    seconds_by_file,
)

__all__ = ["FlakyResult", "Policy", "Report", "Run", "Verdict", "decide", "merge_attempts", "report_from_events"]


@dataclass(frozen=True, kw_only=True)
class Report:
    """What one process run's test report said (empty ``problem`` = a usable report)."""

    cases: tuple[CaseResult, ...] = ()
    problem: str = ""  # "no test report", "unparseable: ...", "stale"
    collect_errors: tuple[CaseResult, ...] = ()
    # files named as arguments that failed to collect here too, each told by the shard that runs its tests: no error
    # of this shard, but the reason for its pytest's exit code 1
    collect_errors_elsewhere: tuple[str, ...] = ()
    in_flight: tuple[str, ...] = ()  # started, never finished (killed)
    not_collected: tuple[str, ...] = ()
    deselected: tuple[str, ...] = ()
    skipped_at_collection: Mapping[str, str] = field(default_factory=dict)
    skipped_collectors: Mapping[str, str] = field(default_factory=dict)  # each a skipped test, as pytest counts it
    skipped_collector_reports: Mapping[str, int] = field(default_factory=dict)  # those pytest skipped more than once
    collect_seconds: Mapping[str, float] = field(default_factory=dict)  # test file -> its collection's seconds
    ended_early: str = ""  # why pytest ended the session before its last test (-x, pytest.exit()), in its words
    finished: bool = False  # pytest's session ended (the plugin's finish event): a process that died has none


@dataclass(frozen=True, kw_only=True)
class Run:
    """One process run: the first run of a batch, or a re-run of failed tests."""

    rerun: int  # 0 for the first run, k for the k-th re-run
    items: tuple[str, ...]
    exit_code: int | None
    signal: int | None
    start_error: str = ""
    timed_out: bool = False
    cancelled: bool = False
    report: Report = field(default_factory=Report)
    exit_cause: str = ""  # what its output says made it exit non-zero (run.exit_causes), "" when nothing known


@dataclass(frozen=True, kw_only=True)
class Policy:
    accept_exit_code: bool = False
    flaky_result: FlakyResult = FlakyResult.PASS
    max_test_seconds: float | None = None
    timeout_seconds: float | None = None


@dataclass(frozen=True, kw_only=True)
class Verdict:
    status: ShardStatus
    reason: str
    problems: tuple[str, ...]
    cases: tuple[CaseResult, ...]
    flaky: tuple[str, ...]
    not_run: tuple[str, ...]
    records: tuple[FailureRecord, ...]
    accounted: bool = True  # False: --accept-exit-code without a usable report (outcome.json's ``accounted``)


def _case_from_event(event: Mapping[str, Any]) -> CaseResult:
    """One ``result`` event as a case: our plan-style id for accounting, and for JUnit the identity
    pytest's own ``--junitxml`` would write (``junit``: classname, name, file, line), kept as written."""
    test_id = str(event["id"])
    file, _, rest = test_id.partition("::")
    classname, _, name = rest.rpartition("::")
    identity = event.get("junit") or {}
    outcome = CaseOutcome(event.get("outcome", "error"))
    xfail = {"xfailed": XFAILED_TYPE, "xpassed": XPASSED_TYPE}.get(str(event.get("xfail", "")), "")
    return CaseResult(
        test_id=test_id,
        name=str(identity.get("name", name or test_id)),
        classname=str(identity.get("classname", classname)),
        file=file,
        line=event.get("line"),
        outcome=outcome,
        time=float(event.get("duration", 0.0)),
        message=str(event.get("message", "")),
        text=str(event.get("text", "")),
        type="pytest" if outcome.is_bad else xfail,
        junit_attrs=tuple((k, str(v)) for k, v in identity.items() if k in JUNIT_IDENTITY_ATTRS and v is not None),
        attempts=tuple(_attempt_from_event(a) for a in event.get("reruns") or () if isinstance(a, Mapping)),
    )


def _attempt_from_event(attempt: Mapping[str, Any]) -> Attempt:
    """A failed attempt pytest-rerunfailures re-ran, as the plugin's result event lists it (``reruns``)."""
    outcome = CaseOutcome.ERROR if attempt.get("outcome") == "error" else CaseOutcome.FAILED
    return Attempt(
        outcome=outcome,
        message=str(attempt.get("message", "")),
        type="pytest",
        text=str(attempt.get("text", "")),
        time=float(attempt.get("duration", 0.0)),
    )


def _mapping(event: Mapping[str, object], key: str) -> dict[Any, Any]:
    """The event's JSON object under ``key`` ({} when absent or not an object)."""
    value = event.get(key)
    return dict(value) if isinstance(value, dict) else {}


def report_from_events(lines: Iterable[str]) -> Report:
    """Read the pytest plugin's JSON-lines events (ids are plan-style). A test's attempts under
    pytest-rerunfailures give one result (the plugin reports the last); more results of one id are tests
    of their own: items sharing a node id, which pytest runs and counts each."""
    results: dict[str, CaseResult] = {}
    repeated: list[CaseResult] = []  # items that share a node id, each run by pytest: a test each
    started: list[str] = []
    collect_errors: list[CaseResult] = []
    elsewhere: list[str] = []
    collected: dict[str, object] = {}
    ended_early, finished = "", False
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a line cut by a kill
        kind = event.get("event")
        if kind == "start":
            started.append(str(event.get("id", "")))
        elif kind == "result":
            case = _case_from_event(event)
            if case.test_id in results:  # pyyaml 6.0.4's three tests/legacy_tests/test_yaml.py::test_yaml.py
                repeated.append(results[case.test_id])
            results[case.test_id] = case
        elif kind == "collect-error" and event.get("elsewhere"):
            elsewhere.append(str(event.get("id", "")))
        elif kind == "collect-error":
            test_id = str(event.get("id", "<collection>"))
            collect_errors.append(
                CaseResult(
                    test_id=test_id,
                    name=test_id,
                    file=item_file(test_id),
                    outcome=CaseOutcome.ERROR,
                    message="collection failure",
                    type=COLLECTION_ERROR_TYPE,
                    text=str(event.get("text", "")),
                )
            )
        elif kind == "collected":
            collected = event
        elif kind == "finish":
            ended_early, finished = str(event.get("stopped", "")), True
    in_flight = tuple(dict.fromkeys(i for i in started if i not in results))
    return Report(
        cases=(*repeated, *results.values()),
        collect_errors=tuple(collect_errors),
        collect_errors_elsewhere=tuple(elsewhere),
        in_flight=in_flight,
        not_collected=tuple(str(i) for i in collected.get("not_collected", []) or []),  # type: ignore[attr-defined]
        deselected=tuple(str(i) for i in collected.get("deselected", []) or []),  # type: ignore[attr-defined]
        skipped_at_collection=_mapping(collected, "skipped_at_collection"),
        skipped_collectors=_mapping(collected, "skipped_collectors"),
        skipped_collector_reports=_mapping(collected, "skipped_collector_reports"),
        collect_seconds=seconds_by_file(collected.get("collect_seconds")),
        ended_early=ended_early,
        finished=finished,
    )


def merge_attempts(first: Sequence[CaseResult], reruns: Sequence[Sequence[CaseResult]]) -> list[CaseResult]:
    """Fold re-run results into the first run's cases (Surefire style).

    Failed, then passed → PASSED with the failures as attempts (flaky). Failed every time → the first
    failure with the later ones as attempts. A re-run that did not report a test leaves it failed.
    """
    merged: dict[str, CaseResult] = {}
    repeated: list[CaseResult] = []  # a node id pytest ran more than once (items sharing it): the later ones
    for case in first:
        if case.test_id in merged:
            repeated.append(case)
        else:
            merged[case.test_id] = case
    history: dict[str, list[CaseResult]] = {}
    for round_cases in reruns:
        for case in round_cases:
            if case.test_id in merged and merged[case.test_id].outcome.is_bad:
                history.setdefault(case.test_id, []).append(case)
    for test_id, later in history.items():
        original = merged[test_id]
        # a case's own attempts (pytest-rerunfailures' within one run) come before its result, in run order
        again: list[Attempt] = []
        final: CaseResult | None = None
        for case in later:
            if case.outcome.is_bad:
                again += [*case.attempts, _attempt(case)]
            else:
                final = case
                break
        if final is not None:
            attempts = (*original.attempts, _attempt(original), *again, *final.attempts)
            merged[test_id] = replace(final, attempts=attempts)
        else:
            merged[test_id] = replace(original, attempts=(*original.attempts, *again))
    return [*merged.values(), *repeated]


def _attempt(case: CaseResult) -> Attempt:
    return Attempt(outcome=case.outcome, message=case.message, type=case.type, text=case.text, time=case.time)


def _not_run_case(item: str, message: str) -> CaseResult:
    file, _, rest = item.partition("::")
    classname, _, name = rest.rpartition("::")
    return CaseResult(
        test_id=item,
        name=name or item,
        classname=classname,
        file=file,
        outcome=CaseOutcome.ERROR,
        message=message,
        type=NOT_RUN_TYPE,
    )


def _slow(cases: Iterable[CaseResult], budget: float | None) -> list[CaseResult]:
    if budget is None:
        return list(cases)
    out = []
    for case in cases:
        if case.outcome is CaseOutcome.PASSED and case.time > budget:
            message = f"passed but took {case.time:.1f} s, over the --max-test-seconds budget of {budget:g} s"
            case = replace(case, outcome=CaseOutcome.FAILED, type="too-slow", message=message)  # noqa: PLW2901
        out.append(case)
    return out


_EMPTY_SHARD = Verdict(
    status=ShardStatus.EMPTY,
    reason="the plan gives this shard no items",
    problems=(),
    cases=(),
    flaky=(),
    not_run=(),
    records=(),
)
PYTEST_NO_TESTS_COLLECTED = 5  # pytest.ExitCode.NO_TESTS_COLLECTED (this module imports no pytest)
_NEVER_REPORTED = "planned but never reported by the test command (not collected, deleted, renamed or crashed)"


def decide(
    *, shard_index: int, shard_name: str, planned: Sequence[str], runs: Sequence[Run], policy: Policy
) -> Verdict:
    """The shard's status, its final test cases and its failure records, in the steps of docs/rules.md:
    a status that is not the tests' (never started, timed out, cancelled) first; then the cases (run,
    re-run, killed in flight, left out, never reported); then failed or passed, which the judge checks."""
    if not planned and not runs:
        return _EMPTY_SHARD
    first = [r for r in runs if r.rerun == 0]
    first_cases = [c for r in first for c in r.report.cases]
    collect_errors = [c for r in first for c in r.report.collect_errors]
    merged = _merged_cases(first_cases, runs, policy)
    stopped = _stopped(first, runs, policy)
    problems = [stopped.problem] if stopped is not None else []
    all_cases = merged + collect_errors + _killed_in_flight(runs, merged) + _left_out(first)
    report_problems = [f"{r.report.problem}" for r in first if r.report.problem and not r.start_error]
    exit_code_only = policy.accept_exit_code and bool(report_problems)
    matched = verified(frozenset(planned), all_cases)
    not_run: list[str] = []
    if exit_code_only:
        problems.append("accounting impossible: no usable test report, the status comes from the exit code alone")
    elif matched:
        not_run = _unreported(planned, all_cases)
    # else unverified: no reported test belongs to a planned item; the judge fails the shard below and
    # every item is not run (no case is written in for them: that would make the results look matched)
    ended_early = next((e for e in map(_ended_early, first) if e), "")
    in_flight = {t for r in first for t in r.report.in_flight}
    errored = {c.test_id for c in all_cases if c.type == COLLECTION_ERROR_TYPE}
    under_errors = _under_collection_errors(not_run, errored) if stopped is None else []
    left_out = {case.test_id for case in under_errors}
    not_run = [item for item in not_run if item not in left_out]
    all_cases += under_errors + _unreported_cases(not_run, stopped, ended_early, in_flight)
    status = stopped.status if stopped is not None else None
    if status is None:
        status = _failed_or_passed(
            first=first,
            merged=merged,
            collect_errors=collect_errors,
            report_problems=report_problems,
            not_run=not_run,
            problems=problems,
            policy=policy,
            ended_early=ended_early,
        )
    if report_problems and not policy.accept_exit_code and not first_cases:
        all_cases.append(_no_report_case(first, report_problems[0], shard_name))
    if not matched and not exit_code_only:
        not_run = list(planned)
    return finish(
        shard_index=shard_index,
        shard_name=shard_name,
        planned=planned,
        status=status,
        problems=problems,
        cases=all_cases,
        not_run=not_run,
        accounted=not exit_code_only,
    )


def _under_collection_errors(not_run: Sequence[str], errored: set[str]) -> list[CaseResult]:
    """The planned parts of a file (or a class, or a folder's conftest.py) that failed to collect, each left out
    with that cause: plain pytest counts the collector's error alone ("1 passed, 1 error" for a file the plan cut
    into six parts, which a shard had counted as its error and six tests that never ran). The error fails the
    shard, and the verdict names each part."""
    cases = []
    for item in not_run:
        # a file or a class that failed to collect, or a folder whose conftest.py failed to import
        collector = next((e for e in errored if file_under(item_file(item), e) or item.startswith(e + "::")), None)
        if collector is not None:
            cases.append(_skipped_case(item, f"not collected: {collector} failed to collect", LEFT_OUT_TYPE))
    return cases


def _unreported_cases(
    not_run: Sequence[str], stopped: _Stopped | None, ended_early: str, in_flight: set[str]
) -> list[CaseResult]:
    """A case for each planned item no run reported (those under a collection error are left out before:
    ``_under_collection_errors``), saying why when that is known: the shard's own stop, or pytest ending its
    session early (the test it ended in is named: it started and never finished)."""
    if stopped is not None:
        return [_not_run_case(i, stopped.not_run) for i in not_run]
    cases = []
    for item in not_run:
        if ended_early:
            cases.append(_not_run_case(item, f"{'was running' if item in in_flight else 'not run'}: {ended_early}"))
        else:
            cases.append(_not_run_case(item, _NEVER_REPORTED))
    return cases


def _signal_name(number: int) -> str:
    try:
        return f"signal {number} ({signal.Signals(number).name})"
    except ValueError:  # a real-time signal, or one this platform does not name
        return f"signal {number}"


def _ended_early(run: Run) -> str:
    """Why this run's tests stopped before the last one, when its events say ("" otherwise): pytest's own stop
    (-x, pytest.exit(), in its words), or the process dying inside a test (``os._exit``, a crash, a signal not
    ci-shards' own): it started a test, never reported it, and pytest's session never ended."""
    report = run.report
    if report.ended_early:
        return f"pytest ended the session early ({report.ended_early})"
    if report.finished or not report.in_flight or run.timed_out or run.cancelled or run.start_error:
        return ""
    how = f"exit code {run.exit_code}" if run.signal is None else f"killed by {_signal_name(run.signal)}"
    how += f": {run.exit_cause}" if run.exit_cause else ""
    return f"the test process died inside {report.in_flight[-1]} ({how}, before pytest's session ended)"


@dataclass(frozen=True)
class _Stopped:
    """A shard whose status is not the tests' own: why, and what its unreported items say."""

    status: ShardStatus
    problem: str
    not_run: str


def _stopped(first: Sequence[Run], runs: Sequence[Run], policy: Policy) -> _Stopped | None:
    """First match wins: never started, then timed out, then cancelled (docs/rules.md, shard statuses)."""
    never = next((r for r in first if r.start_error), None)
    if never is not None:
        return _Stopped(ShardStatus.NEVER_STARTED, never.start_error, f"not run: {never.start_error}")
    if any(r.timed_out for r in runs):
        limit = f" of {fmt_duration(policy.timeout_seconds)}" if policy.timeout_seconds else ""  # as in --timeout
        return _Stopped(
            ShardStatus.TIMED_OUT,
            f"hit the shard deadline{limit}; the tree was signalled and killed",
            "not run: the shard hit its deadline first",
        )
    if any(r.cancelled for r in runs):
        return _Stopped(
            ShardStatus.CANCELLED,
            "cancelled by a signal to ci-shards; the tree was stopped",
            "not run: the job was cancelled",
        )
    return None


def _merged_cases(first_cases: Sequence[CaseResult], runs: Sequence[Run], policy: Policy) -> list[CaseResult]:
    """The first run's cases with every re-run round folded in, in round order, then the slow ones failed."""
    reruns_by_round: dict[int, list[CaseResult]] = {}
    for run in runs:
        if run.rerun:
            reruns_by_round.setdefault(run.rerun, []).extend(run.report.cases)
    rounds = [reruns_by_round[k] for k in sorted(reruns_by_round)]
    return _slow(merge_attempts(first_cases, rounds), policy.max_test_seconds)


def _killed_in_flight(runs: Sequence[Run], merged: Sequence[CaseResult]) -> list[CaseResult]:
    """A case for each test that was running when the shard was stopped and never reported."""
    timed_out = any(r.timed_out for r in runs)
    message = "killed at the shard deadline while running" if timed_out else "cancelled while running"
    reported = {c.test_id for c in merged}
    in_flight = [t for r in runs if r.timed_out or r.cancelled for t in r.report.in_flight]
    return [replace(_not_run_case(t, message), type=TIMEOUT_TYPE) for t in in_flight if t not in reported]


def _left_out(first: Sequence[Run]) -> list[CaseResult]:
    """The collectors pytest skipped (each a skipped test, as pytest counts them: a file it skipped as a doctest
    module and as a test module twice), then the planned items the command's own rules left out: skipped at
    collection, then deselected."""
    reports = [r.report for r in first]
    collectors = [
        _skipped_case(i, SKIPPED_AT_COLLECTION + why, COLLECTOR_SKIPPED_TYPE)
        for report in reports
        for i, why in report.skipped_collectors.items()
        for _ in range(report.skipped_collector_reports.get(i, 1))
    ]
    skipped = [
        _skipped_case(i, SKIPPED_AT_COLLECTION + why, LEFT_OUT_TYPE)
        for report in reports
        for i, why in report.skipped_at_collection.items()
    ]
    deselected = [_skipped_case(i, DESELECTED_MESSAGE, LEFT_OUT_TYPE) for report in reports for i in report.deselected]
    return collectors + skipped + deselected


def _skipped_case(test_id: str, message: str, kind: str) -> CaseResult:
    return replace(_not_run_case(test_id, message), outcome=CaseOutcome.SKIPPED, type=kind)


def _unreported(planned: Sequence[str], cases: Sequence[CaseResult]) -> list[str]:
    """The planned items no case belongs to, in plan order."""
    own = frozenset(planned)
    covered = {owning_item(c.test_id, own) for c in cases}
    return [item for item in planned if item not in covered]


def _no_report_case(first: Sequence[Run], problem: str, shard_name: str) -> CaseResult:
    """The shard's own case when no usable report came back: the problem and the command's exit code."""
    rc = next((r.exit_code for r in first if r.exit_code is not None), None)
    return CaseResult(
        test_id=f"{SHARD_CASE_CLASSNAME}::{shard_name}",
        name=shard_name,
        classname=SHARD_CASE_CLASSNAME,
        outcome=CaseOutcome.ERROR,
        message=f"{problem}; the command exited with code {rc}",
        type=NO_REPORT_TYPE,
    )


def finish(
    *,
    shard_index: int,
    shard_name: str,
    planned: Sequence[str],
    status: ShardStatus,
    problems: Sequence[str],
    cases: Sequence[CaseResult],
    not_run: Sequence[str],
    accounted: bool,
) -> Verdict:
    """The verdict once ``judge.judge_shard`` has had the last word over these cases."""
    verdict = Verdict(
        status=status,
        reason=problems[0] if problems else "",
        problems=tuple(problems),
        cases=tuple(cases),
        flaky=tuple(c.test_id for c in cases if c.flaky),
        not_run=tuple(not_run),
        records=(),
        accounted=accounted,
    )
    return judged(verdict, planned=planned, cases=cases, shard_index=shard_index, shard_name=shard_name)


def judged(
    verdict: Verdict,
    *,
    planned: Sequence[str],
    cases: Sequence[CaseResult] | None,
    shard_index: int,
    shard_name: str,
    junit_error: str = "",
) -> Verdict:
    """``verdict`` with the status ``judge.judge_shard`` gives a folder holding ``cases`` (and the
    failure records that go with it). ``runner`` calls it again with the cases read back from the
    junit.xml it wrote, so the shard ends with exactly the status aggregate will give that folder."""
    judgement = judge_shard(
        planned=planned,
        reported=verdict.status,
        reason=verdict.reason,
        cases=cases,
        junit_error=junit_error,
        accounted=verdict.accounted,
    )
    status, problems = verdict.status, list(verdict.problems)
    if judgement.status is not status or judgement.reason != verdict.reason:
        status = judgement.status
        problems = [judgement.reason, *(p for p in problems if p != judgement.reason)]
    return replace(
        verdict,
        status=status,
        reason=problems[0] if problems else "",
        problems=tuple(problems),
        records=tuple(_records(shard_index, verdict.cases, status, problems, shard_name)),
    )


def _failed_or_passed(
    *,
    first: Sequence[Run],
    merged: Sequence[CaseResult],
    collect_errors: Sequence[CaseResult],
    report_problems: Sequence[str],
    not_run: Sequence[str],
    problems: list[str],
    policy: Policy,
    ended_early: str = "",
) -> ShardStatus:
    before = len(problems)
    halted = ended_early if not_run else ""  # pytest ended its session before these: the cause to say first
    if collect_errors:
        problems.append(f"{plural(len(collect_errors), 'collection error')}: {collect_errors[0].test_id}")
    if report_problems and not policy.accept_exit_code:
        problems.append(report_problems[0])
    bad = [c for c in merged if c.outcome.is_bad]
    if bad:  # in the headline's words: a shard of errors does not say "tests failed"
        errors = sum(c.outcome is CaseOutcome.ERROR for c in bad)
        problems.append(f"{count_failures(len(bad) - errors, errors)}, first: {bad[0].test_id}")
    flaky = [c for c in merged if c.flaky]
    if flaky and policy.flaky_result is FlakyResult.FAIL:
        verb = "counts" if len(flaky) == 1 else "count"
        problems.append(f"{plural(len(flaky), 'flaky test')} {verb} as failures (--flaky-result fail)")
    if halted:
        problems.append(f"{halted}; {_never_reported(not_run)}")
    usable = not report_problems or policy.accept_exit_code
    # A shard whose planned items pytest's own rules all left out (a module or a folder's conftest.py
    # that skips at collection, tests its -m deselects) ran nothing, as plain pytest runs nothing of
    # them: not "zero tests executed", and pytest's exit code 5 (no tests collected) is no failure
    # (a shard of networkx-like importorskip files; plain pytest of the suite passes).
    all_left_out = not not_run and any(_nothing_to_run(r) for r in first)
    if usable and not merged and not collect_errors and not policy.accept_exit_code and not all_left_out and not halted:
        cause = next((r.exit_cause for r in first if r.exit_cause), "")  # pytest's usage error, say
        problems.append(f"zero tests executed: {cause}" if cause else "zero tests executed")
    if not (flaky and not bad) and not halted:  # re-runs that resolved every failure explain a bad exit
        elsewhere = any(r.report.collect_errors_elsewhere for r in first)
        explained = bool(bad or collect_errors or elsewhere or (report_problems and not policy.accept_exit_code))
        exit_code_only = policy.accept_exit_code and bool(report_problems)
        problems += _exit_problem(first, explained=explained, exit_code_only=exit_code_only)
    if not_run and not halted:
        problems.append(_never_reported(not_run))
    return ShardStatus.FAILED if len(problems) > before else ShardStatus.PASSED


def _exit_problem(first: Sequence[Run], *, explained: bool, exit_code_only: bool) -> list[str]:
    """The first bad exit of the first runs as a problem, unless the failures listed ``explained`` it; with
    ``exit_code_only`` (--accept-exit-code, no usable report) the exit code is all there is to say."""
    for run in first:
        if run.signal is None and (run.exit_code in (0, None) or _nothing_to_run(run)):
            continue
        code = f"signal {run.signal}" if run.signal is not None else f"code {run.exit_code}"
        if not explained:
            cause = f": {run.exit_cause}" if run.exit_cause else ""
            return [f"the command exited with {code} but its report shows no failure{cause}"]
        return [f"the command exited with {code}"] if exit_code_only else []
    return []


def _never_reported(not_run: Sequence[str]) -> str:
    files = sorted({item_file(i) for i in not_run})
    verb = "was" if len(not_run) == 1 else "were"
    where = f"in {plural(len(files), 'file')}, first: {not_run[0]}"
    return f"{plural(len(not_run), 'planned item')} {verb} never reported, {where}"


def _nothing_to_run(run: Run) -> bool:
    """pytest's "no tests collected" (exit 5) from a run whose every planned item its own rules left
    out: skipped at collection or deselected, none of them reported otherwise. In a report the command wrote (its
    own --junitxml) such a run holds only the skipped collectors' testcases: a shard of one importorskip module,
    run whole by a command given {items} (plain pytest of the suite passes)."""
    report = run.report
    if run.exit_code != PYTEST_NO_TESTS_COLLECTED or report.collect_errors or report.not_collected:
        return False
    if report.cases:
        return all(case.type == COLLECTOR_SKIPPED_TYPE for case in report.cases)
    return bool(report.skipped_at_collection or report.skipped_collectors or report.deselected)


def _records(
    shard: int, cases: Iterable[CaseResult], status: ShardStatus, problems: Sequence[str], shard_name: str
) -> list[FailureRecord]:
    records: list[FailureRecord] = []
    for case in cases:
        kind = failure_kind(case)
        if kind is None:
            continue
        first_message = case.attempts[0].message if case.flaky and case.attempts else case.message
        records.append(
            FailureRecord(
                shard=shard,
                test_id=case.test_id,
                kind=kind,
                message=first_message.splitlines()[0] if first_message else "",
                file=case.file,
                classname=case.classname,
                name=case.name,
                text=(case.attempts[0].text if case.flaky and case.attempts else case.text)[:16384],
                attempts=1 + len(case.attempts),
                duration=case.time,
            )
        )
    if not status.is_success and problems:
        records.append(
            FailureRecord(
                shard=shard,
                test_id=f"{SHARD_CASE_CLASSNAME}::{shard_name}",
                kind=FailureKind.SHARD,
                message=f"{status.value}: {problems[0]}",
                classname=SHARD_CASE_CLASSNAME,
                name=shard_name,
                text="\n".join(problems),
            )
        )
    return records
