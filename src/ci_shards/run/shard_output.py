"""A finished shard run turned into its artifact folder and its console summary.

Writes outcome.json (last, atomically: its presence means the folder is complete), junit.xml and
failures.jsonl next to the output.log the run spooled; prints the one-line summary, and on failure
the output tail folded in a ``::group::`` and fenced against workflow commands (``Console.untrusted``).
"""

from __future__ import annotations

import os
import platform
import shlex
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ci_shards import __version__
from ci_shards.common import outfile
from ci_shards.common.console import Console
from ci_shards.common.facts import RunnerFacts
from ci_shards.judge import SYNTHESISED_TYPES
from ci_shards.junit import JUnitError, parse_junit, write_junit
from ci_shards.model.failures import FailureRecord, dumps_jsonl
from ci_shards.model.fields import rfc3339
from ci_shards.model.outcome import CaseOutcome, CaseResult, Outcome, Totals
from ci_shards.model.plan import Plan
from ci_shards.run.classify import Run, Verdict, judged
from ci_shards.run.process import ProcessResult
from ci_shards.run.spool import OUTCOME_TAIL_BYTES, TAIL_BYTES, read_tail


def now_rfc3339() -> str:
    return rfc3339(datetime.now(timezone.utc))


def _as_text(command_line: str) -> str:
    """The command line as UTF-8 text can hold it: a byte that is not UTF-8 (``-- mytool $'\\xff'``) reaches Python
    as a lone surrogate, which outcome.json cannot be written with; it is recorded as ``\\xff``."""
    return os.fsencode(command_line).decode("utf-8", "backslashreplace")


def attempt_entry(
    *, argv: Sequence[str], result: ProcessResult, rerun: int, batch: tuple[int, int], items: int, tests: int
) -> dict[str, Any]:
    return {
        "rerun": rerun,
        "batch": batch[0],
        "batches": batch[1],
        "items": items,
        "tests_reported": tests,
        "argv": _as_text(shlex.join(argv))[:1000],
        "exit_code": result.exit_code,
        "signal": result.signal,
        "start_error": result.start_error,
        "timed_out": result.timed_out,
        "cancelled": result.cancelled,
        "elapsed_seconds": round(result.elapsed, 3),
        "deadline_to_dead_seconds": None if result.deadline_to_dead is None else round(result.deadline_to_dead, 3),
        "leaked_processes": list(result.leaked),
    }


def reported_cases(verdict: Verdict) -> list[CaseResult]:
    """The cases the command reported, without those ci-shards made up (never run, killed, no report)."""
    return [c for c in verdict.cases if c.type not in SYNTHESISED_TYPES]


def build_outcome(
    *,
    plan: Plan,
    shard_index: int,
    env: Mapping[str, str],
    runs: Sequence[Run],
    attempts: Sequence[Mapping[str, Any]],
    leaked: Sequence[str],
    verdict: Verdict,
    started_at: str,
    elapsed: float,
    planned: Sequence[str],
    log_path: Path,
    subreaper: bool,
) -> Outcome:
    """outcome.json's content (docs/run.md, "The artifact folder")."""
    first = [r for r in runs if r.rerun == 0]
    bad_rc = next((r for r in first if r.exit_code not in (0, None) or r.signal is not None), None)
    rc_run = bad_rc or (first[0] if first else None)
    reported = reported_cases(verdict)
    totals = Totals.of(verdict.cases)
    return Outcome(
        plan_digest=plan.digest,
        shard_index=shard_index,
        shard_total=plan.total,
        status=verdict.status,
        reason=verdict.reason,
        exit_code=rc_run.exit_code if rc_run else None,
        signal=rc_run.signal if rc_run else None,
        started_at=started_at,
        finished_at=now_rfc3339(),
        elapsed_seconds=elapsed,
        planned_items=len(planned),
        executed_tests=sum(c.outcome is not CaseOutcome.SKIPPED for c in reported),
        passed=totals.passed,
        failed=totals.failed,
        errors=totals.errors,
        skipped=totals.skipped,
        xfailed=totals.xfailed,
        xpassed=totals.xpassed,
        attempts=tuple(attempts),
        flaky_tests=verdict.flaky,
        not_run=verdict.not_run,
        leaked_processes=tuple(leaked),
        log_tail=read_tail(log_path, OUTCOME_TAIL_BYTES),
        runner=runner_facts(env, subreaper=subreaper, problems=verdict.problems),
        accounted=verdict.accounted,
        collect_seconds=_collect_seconds(first),
    )


def _collect_seconds(first_runs: Sequence[Run]) -> dict[str, float]:
    """Each file's collection seconds over the first runs (a file collected in two batches paid twice)."""
    seconds: dict[str, float] = {}
    for run in first_runs:
        for file, value in run.report.collect_seconds.items():
            seconds[file] = round(seconds.get(file, 0.0) + value, 4)
    return seconds


def runner_facts(env: Mapping[str, str], *, subreaper: bool, problems: Sequence[str]) -> RunnerFacts:
    attempt = (env.get("GITHUB_RUN_ATTEMPT") or "").strip()
    return RunnerFacts(
        ci_shards=__version__,
        os=platform.platform(),
        python=platform.python_version(),
        hostname=platform.node(),
        ci_run_id=env.get("GITHUB_RUN_ID") or env.get("CI_PIPELINE_ID") or "",
        ci_run_attempt=int(attempt) if attempt.isdigit() else 0,
        subreaper=subreaper,
        problems=tuple(problems),
    )


def write_report(shard_dir: Path, verdict: Verdict, *, name: str, planned: Sequence[str], shard_index: int) -> Verdict:
    """Write junit.xml, read it back, and judge the shard by what it holds: the status aggregate will
    give this folder (``judge.judge_shard``), even when the JUnit round trip changes a test id."""
    path = shard_dir / "junit.xml"
    write_junit(verdict.cases, path, suite_name=f"ci-shards {name}")
    written: list[CaseResult] | None = None
    problem = ""
    try:
        written = parse_junit(path)
    except JUnitError as err:
        problem = err.problem
    return judged(
        verdict, planned=planned, cases=written, shard_index=shard_index, shard_name=name, junit_error=problem
    )


def clear_stale(shard_dir: Path) -> None:
    """Remove an earlier run's outcome.json (first: it is what makes a folder count as finished), junit.xml
    and failures.jsonl before this run starts, so a run killed before it writes its own leaves a folder
    aggregate reads as unfinished, never the earlier run's verdict (a re-run job in the same workspace)."""
    for name in ("outcome.json", "junit.xml", "failures.jsonl"):
        (shard_dir / name).unlink(missing_ok=True)


def write_outcome(shard_dir: Path, outcome: Outcome, records: Sequence[FailureRecord]) -> None:
    """failures.jsonl, then outcome.json last, each atomically: outcome.json's presence means the folder is
    complete. The one writer of these files (the test fixtures use it too)."""
    outfile.write_atomic(shard_dir / "failures.jsonl", dumps_jsonl(records))
    outfile.write_atomic(shard_dir / "outcome.json", outcome.dumps())


def tally(cases: Sequence[CaseResult]) -> str:
    """``484 tests run: 470 passed, 1 failed, 0 errors, 10 skipped, 2 xfailed, 1 xpassed``: every test
    the command reported, counted as pytest counts them (``model.outcome.Totals``)."""
    counts = Totals.of(cases).counts_line()
    tests, _, rest = counts.partition(", ")
    return f"{tests} run: {rest}"


def print_summary(console: Console, outcome: Outcome, verdict: Verdict, log_path: Path) -> None:
    summary = (
        f"ci-shards shard {outcome.shard_index}/{outcome.shard_total}: {outcome.status.value} "
        f"({tally(reported_cases(verdict))}; {len(outcome.flaky_tests)} flaky, {len(outcome.not_run)} not run) "
        f"in {outcome.elapsed_seconds:.1f} s"
    )
    if outcome.status.is_success:
        console.line(summary)
        for flaky in outcome.flaky_tests[:20]:
            console.warning(f"flaky: {flaky}")
        return
    with console.group(f"output tail of shard {outcome.shard_index}/{outcome.shard_total} (last 64 KiB of {log_path})"):
        console.untrusted(read_tail(log_path, TAIL_BYTES))
    console.error(f"{summary}: {verdict.reason}")
