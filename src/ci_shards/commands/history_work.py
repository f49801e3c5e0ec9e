"""The edge of the test history for ``aggregate``: who this run is (commit, branch, run id from the
environment, else git), ancestry checks with git, reading the history before the verdict and
folding this run into it after.

Everything it decides is in ``history/outcomes.py`` and ``report/triage.py``; this module only gathers the facts.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ci_shards.common.console import Console
from ci_shards.common.errors import InputError
from ci_shards.history.outcomes import SECTION, History, RunInfo, format_date, marks_of, read_history
from ci_shards.model.failures import FailureKind
from ci_shards.model.plan import Plan
from ci_shards.report import github
from ci_shards.report.aggregate import FlakyResult, decide
from ci_shards.report.artifacts import read_shard_folders
from ci_shards.report.quarantine import QuarantineEntry
from ci_shards.report.triage import DEFAULT_MAX_BASE_AGE_DAYS, Ancestry, FailOn, Triage, TriageContext, classify
from ci_shards.report.verdict import Verdict

_TEST_KINDS = (FailureKind.FAILED, FailureKind.ERROR, FailureKind.TIMED_OUT)
_GIT_SECONDS = 10.0


@dataclass(frozen=True, kw_only=True)
class HistoryOptions:
    fail_on: FailOn = FailOn.ANY
    history: Path | None = None  # the store to read the base's history from (default: --timings-out)
    record: bool = False  # --record-history: also off the default branch
    base_branch: str | None = None
    max_base_age_days: int = DEFAULT_MAX_BASE_AGE_DAYS
    quarantine: tuple[QuarantineEntry, ...] = ()
    quarantine_source: str = ""


@dataclass(frozen=True, kw_only=True)
class Triaged:
    verdict: Verdict  # with the excused failures no longer failing it, and expired quarantine entries failing it
    triage: Triage
    run: RunInfo
    record: bool  # whether this run goes into the history
    why_not_recorded: str


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=_GIT_SECONDS, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _git_text(args: Sequence[str], cwd: Path) -> str:
    done = _git(args, cwd)
    return done.stdout.strip() if done is not None and done.returncode == 0 else ""


def ancestry_of(commits: Collection[str], head: str, cwd: Path) -> dict[str, Ancestry]:
    """``git merge-base --is-ancestor`` per commit: exit 0 yes, 1 no, anything else (no git, a
    shallow clone without that commit) unknown."""
    result: dict[str, Ancestry] = {}
    for commit in commits:
        done = _git(["merge-base", "--is-ancestor", commit, head or "HEAD"], cwd) if commit else None
        code = done.returncode if done is not None else -1
        result[commit] = {0: Ancestry.ANCESTOR, 1: Ancestry.NOT_ANCESTOR}.get(code, Ancestry.UNKNOWN)
    return result


def this_run(env: Mapping[str, str], cwd: Path, now: datetime) -> RunInfo:
    commit = env.get("GITHUB_SHA") or _git_text(["rev-parse", "HEAD"], cwd)
    branch = env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME") or _git_text(["branch", "--show-current"], cwd)
    run_id = env.get("GITHUB_RUN_ID", "")
    run = f"{run_id}.{env.get('GITHUB_RUN_ATTEMPT') or '1'}" if run_id else f"local-{format_date(now)}"
    return RunInfo(run=run, commit=commit, branch=branch, date=now)


def _default_branch(env: Mapping[str, str]) -> str:
    try:
        event = github.load_event(env.get("GITHUB_EVENT_PATH"))
    except InputError:
        return ""
    repository = event.get("repository")
    return str(repository.get("default_branch") or "") if isinstance(repository, Mapping) else ""


def triage_verdict(
    verdict: Verdict,
    redecide: Callable[[frozenset[str]], Verdict],
    history: History,
    opts: HistoryOptions,
    *,
    env: Mapping[str, str],
    cwd: Path,
    now: datetime | None = None,
) -> Triaged:
    """Classify the verdict's failures against ``history``; decide again when some are excused."""
    when = now or datetime.now(timezone.utc).replace(microsecond=0)
    run = this_run(env, cwd, when)
    base = opts.base_branch or env.get("GITHUB_BASE_REF") or run.branch
    failing = [r.test_id for r in verdict.failures if r.kind in _TEST_KINDS]
    base_commits = {r.commit for r in history.runs if r.branch == base} if failing else set()
    ctx = TriageContext(
        commit=run.commit,
        base_branch=base,
        now=when,
        fail_on=opts.fail_on,
        max_base_age_days=opts.max_base_age_days,
        ancestry=ancestry_of(base_commits, run.commit, cwd),
        quarantine=opts.quarantine,
        quarantine_source=opts.quarantine_source,
    )
    triage = classify(failing, marks_of(verdict.cases), history, ctx)
    if triage.excused:
        verdict = redecide(triage.excused)
    if triage.expired:
        verdict = replace(verdict, reasons=(*verdict.reasons, *triage.expired))
    default = _default_branch(env)
    record = opts.record or bool(default and run.branch == default)
    why = "" if record else f"{run.branch or 'this branch'} is not the default branch; --record-history records it"
    return Triaged(verdict=verdict, triage=triage, run=run, record=record, why_not_recorded=why)


def history_section(store_path: Path, triaged: Triaged, console: Console) -> dict[str, Any]:
    """The history to write back into the store at ``store_path``: its own section with this run
    added when recorded, else unchanged (a PR's write-back never drops the base's history)."""
    history, _warnings = read_history(store_path)  # the timings write-back already warns about this file
    if triaged.record:
        history = history.record(triaged.run, marks_of(triaged.verdict.cases))
        console.line(f"ci-shards: test history: recorded run {triaged.run.run} ({len(history.runs)} runs kept)")
    else:
        console.line(f"ci-shards: test history: this run is not recorded ({triaged.why_not_recorded})")
    return {SECTION: history.to_json()} if history.runs else {}


def decide_with_history(
    plan: Plan,
    dirs: Sequence[Path],
    *,
    flaky_result: FlakyResult,
    allow_empty: bool,
    opts: HistoryOptions,
    store: Path | None,
    env: Mapping[str, str],
    console: Console,
) -> Triaged:
    """``aggregate_dirs`` with the history: the folders are read once, decided, classified against
    the history in ``opts.history`` (else ``store``, the --timings-out file), decided again when
    some failures are excused."""
    artifacts = read_shard_folders([Path(d) for d in dirs])

    def decide_excusing(excused: frozenset[str]) -> Verdict:
        return decide(plan, artifacts, flaky_result=flaky_result, allow_empty=allow_empty, excused=excused)

    history, warnings = read_history(opts.history or store)
    if opts.history is not None and opts.history != store:  # else the timings write-back warns about it
        for warning in warnings:
            console.warning(f"ci-shards: {warning}")
    return triage_verdict(decide_excusing(frozenset()), decide_excusing, history, opts, env=env, cwd=Path.cwd())
