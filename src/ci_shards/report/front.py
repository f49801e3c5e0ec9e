"""The aggregate stage's front doors: ``aggregate`` (typed ``AggregateOptions`` in, ``Aggregated`` out) and
``run_comment`` (the ``comment`` command's keyword arguments in, the exit code out). Both read the environment
only through the ``env`` mapping they are given.

Imported only when one of them runs (``commands/aggregate.py`` imports it inside its handlers), so the
reporting work (jinja2, the report package: ~50-90 ms of imports, docs/benchmarks.md) costs nothing to
``plan``, ``matrix`` or ``run``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ci_shards.common.console import Console, console_for
from ci_shards.common.errors import EXIT_OK, EXIT_USAGE, InputError, UsageError
from ci_shards.model.plan import Plan
from ci_shards.model.planfile import load_plan
from ci_shards.options.typed import AggregateOptions
from ci_shards.options.values import CommentMode
from ci_shards.report import comment as pr_comment
from ci_shards.report import github, joblinks, outputs
from ci_shards.report.aggregate import FlakyResult, Verdict, aggregate_dirs
from ci_shards.report.history import HistoryOptions, decide_with_history, history_section
from ci_shards.report.render import comment_marker, complete_in, render_comment, render_summary, render_terminal
from ci_shards.report.triage import FailOn, Triage
from ci_shards.report.triage_view import render_triage_terminal, triage_json

if TYPE_CHECKING:  # coverage.publish is imported only when coverage is asked for
    from ci_shards.coverage.publish import Reported

# --------------------------------------------------------------------------------------------
# aggregate


def _with_event(ctx: github.GitHubContext, env: Mapping[str, str], console: Console) -> github.GitHubContext:
    """``ctx`` with the webhook payload, loaded only where the PR comment needs it: an unreadable
    ``GITHUB_EVENT_PATH`` costs the comment (one warning), never the verdict or the reports."""
    try:
        event = github.load_event(env.get("GITHUB_EVENT_PATH"))
    except InputError as err:
        console.warning(f"ci-shards: {err} (without it the PR comment cannot find its pull request)")
        return ctx
    return dataclasses.replace(ctx, event=event)


def _post_comment(
    verdict: Verdict | None,
    *,
    ctx: github.GitHubContext,
    mode: CommentMode,
    key: str,
    pr: int | None,
    console: Console,
    body: str | None = None,
    summary: bool = True,
    triage: Triage | None = None,
    extra: str = "",
    shard_links: Mapping[int, str] | None = None,
) -> bool:
    """Upsert the PR comment; any failure is a warning, never the build's verdict (style.md).
    True when it fell back to the job summary (no write access), so the caller makes sure the
    summary is there. ``summary`` is False for the ``comment`` command, which writes no summary:
    the notices then say so instead of pointing at one."""
    where = (
        "the results are in the job summary only"
        if summary
        else "no PR comment was written (the comment command writes no job summary)"
    )
    if mode is CommentMode.OFF:
        return False
    number = pr if pr is not None else ctx.pr_number
    if number is None:
        console.notice("ci-shards: no pull request in this event; the PR comment is skipped")
        return False
    if ctx.is_fork_pr or not ctx.token or not ctx.repository:
        why = "this is a fork PR (read-only token)" if ctx.is_fork_pr else "no GITHUB_TOKEN / GITHUB_REPOSITORY"
        console.notice(f"ci-shards: {why}: {where} (docs/aggregate.md shows the workflow_run recipe for fork comments)")
        return True
    marker = comment_marker(key)
    if body is None:
        assert verdict is not None
        body = pr_comment.with_state(
            render_comment(verdict, key=key, run_url=ctx.run_url, triage=triage, shard_links=shard_links) + extra,
            pr_comment.result_state(verdict),
            run_id=ctx.run_id,
            run_attempt=ctx.run_attempt,
        )
        failed = not verdict.passed
    else:
        body = pr_comment.sanitize_body(body, marker, run_id=ctx.run_id, run_attempt=ctx.run_attempt)
        failed = pr_comment.read_state(body).startswith("failed")
    client = pr_comment.CommentClient(api_url=ctx.api_url, repository=ctx.repository, token=ctx.token)
    try:
        result = pr_comment.upsert_comment(client, number, body, marker=marker, mode=mode, failed=failed)
    except pr_comment.GitHubError as err:
        console.warning(f"ci-shards: could not update the PR comment: {err}")
        return True
    if result.action is pr_comment.CommentAction.FALLBACK:
        console.notice(f"ci-shards: {result.detail}; {where}")
        return True
    console.line(f"ci-shards: PR comment {result.action.value} {result.url or result.detail}".rstrip())
    return False


def _job_links(verdict: Verdict, ctx: github.GitHubContext) -> dict[int, str]:
    """Each failing shard's job log (its run's page without a token); {} off GitHub Actions."""
    failing = [s.index for s in verdict.shards if not s.status.is_success]
    return joblinks.job_links(ctx, failing, verdict.total_shards) if failing and ctx.run_url else {}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Aggregated:
    """What ``aggregate`` decided, every output it writes already written: the verdict (with the history's
    excuses), the triage, the folded coverage (None without ``--coverage-out``) and the exit code; ``problems``:
    why it is 2, each output that could not be written and the coverage's problem, one line each naming the file."""

    verdict: Verdict
    triage: Triage
    coverage: Reported | None
    exit_code: int
    problems: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``aggregate --format json``'s object: the verdict, the triage and the coverage figures."""
        payload = {**outputs.verdict_json(self.verdict), "triage": triage_json(self.triage)}
        payload["coverage"] = dict(self.coverage.figures) if self.coverage is not None else None  # None: not folded
        return payload


def aggregate(options: AggregateOptions, *, env: Mapping[str, str]) -> Aggregated:
    """The aggregate stage's front door: every shard folder under ``options.dirs`` judged against the plan, the
    test history's triage, the coverage folded, and every output the options ask for written (merged JUnit,
    failures, summary, comment, annotations, timings write-back); the environment only through ``env``."""
    history_opts = _history_options(options)  # the flags' errors first, as they were before any file is read
    coverage = coverage_options(options)
    plan = load_plan(options.plan)
    console = console_for(env)
    ctx = github.GitHubContext.from_env(env)  # the event payload is read only for the comment
    if options.github and not ctx.step_summary:  # a usage error: said before anything is written
        msg = "--github: GITHUB_STEP_SUMMARY is not set (not on GitHub Actions? use --summary FILE)"
        raise UsageError(msg)
    triaged = decide_with_history(
        plan,
        options.dirs,
        flaky_result=options.flaky_result,
        allow_empty=options.allow_empty,
        opts=history_opts,
        store=options.timings_out,
        env=env,
        console=console,
    )
    verdict, triage = triaged.verdict, triaged.triage
    covered = _fold_coverage(plan, options.dirs, coverage, env, console)
    extra = covered.markdown if covered is not None else ""
    links = _job_links(verdict, ctx)
    told = _Told(
        verdict=verdict,
        triage=triage,
        ctx=ctx,
        summary=render_summary(verdict, triage=triage, shard_links=links) + extra,
        extra=extra,
        links=links,
        key=options.comment_key or ctx.comment_key,
    )
    write = _Writes(console)
    _write_files(options, told, write)
    _say(options, told, console, env)
    if options.comment:
        _comment(options, told, write, console, env)
    if options.timings_out:
        history = history_section(options.timings_out, triaged, console)
        _write_timings(verdict, options.timings_out, options.timings_variant, console, history)
    coverage_code = covered.exit_code if covered is not None else EXIT_OK
    code = max(EXIT_USAGE if write.unwritten else verdict.exit_code, coverage_code)
    problems = tuple(str(err) for err in write.unwritten)
    if covered is not None and coverage_code == EXIT_USAGE:
        problems += (f"coverage: {covered.figures.get('error')}",)
    return Aggregated(verdict=verdict, triage=triage, coverage=covered, exit_code=code, problems=problems)


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Told:
    """What every output of one aggregate is made from: the verdict and triage, the run's GitHub context, the
    job summary's Markdown (coverage section included), the coverage section alone (``extra``, for the
    comment), each failing shard's job link and the comment's key."""

    verdict: Verdict
    triage: Triage
    ctx: github.GitHubContext
    summary: str
    extra: str
    links: dict[int, str]
    key: str


class _Writes:
    """Every output that can be written is written: one that cannot is an error line (exit 2 at the end),
    never a reason to skip the others. The timings are last and only warn: they are for the next run."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.unwritten: list[InputError] = []

    def __call__(self, action: Callable[[], None]) -> None:
        try:
            action()
        except InputError as err:
            self.console.error(str(err))
            self.unwritten.append(err)


def _write_files(options: AggregateOptions, told: _Told, write: _Writes) -> None:
    """The files the options name: merged JUnit, failures, the summary (``--summary``, ``--github``), the comment."""
    verdict, summary = told.verdict, told.summary
    junit_out, failures_out, summary_out, comment_out = (
        options.junit_out,
        options.failures_out,
        options.summary_out,
        options.comment_out,
    )
    if junit_out:
        write(lambda: outputs.write_merged_junit(verdict, junit_out))
    if failures_out:
        write(lambda: outputs.write_failures(verdict, failures_out))
    if summary_out:  # a file of the caller's: written, so running twice never holds two verdicts
        write(lambda: outputs.write_text(summary_out, summary))
    if options.github:  # the job summary is shared by every step of the job: appended, as GitHub expects
        write(lambda: outputs.append_summary(summary, Path(told.ctx.step_summary)))
    if comment_out:
        ctx = told.ctx
        body = pr_comment.with_state(
            render_comment(verdict, key=told.key, run_url=ctx.run_url, triage=told.triage, shard_links=told.links)
            + told.extra,
            pr_comment.result_state(verdict),
            run_id=ctx.run_id,
            run_attempt=ctx.run_attempt,
        )
        write(lambda: outputs.write_text(comment_out, body))


def _say(options: AggregateOptions, told: _Told, console: Console, env: Mapping[str, str]) -> None:
    """The verdict on the terminal, the triage under it, and the annotations on GitHub Actions."""
    shown_in = every_in(options.github, options.summary_out, options.failures_out)
    console.untrusted(render_terminal(told.verdict, every_in=shown_in))
    triage_text = render_triage_terminal(told.triage)
    if triage_text:
        console.untrusted(triage_text)
    if options.annotations and (options.github or told.ctx.actions):
        for line in github.annotation_lines(told.verdict, workspace=env.get("GITHUB_WORKSPACE", "")):
            console.line(line)


def _comment(options: AggregateOptions, told: _Told, write: _Writes, console: Console, env: Mapping[str, str]) -> None:
    """The PR comment posted (``--comment``); where it falls back, the job summary holds the verdict."""
    ctx = told.ctx
    fell_back = _post_comment(
        told.verdict,
        ctx=_with_event(ctx, env, console),
        mode=options.comment_mode,
        key=told.key,
        pr=None,
        console=console,
        triage=told.triage,
        extra=told.extra,
        shard_links=told.links,
    )
    if fell_back and ctx.step_summary and not options.github and options.summary_out is None:
        # "falls back to the job summary": make sure it is there even without --github / --summary
        # (with --summary FILE the caller publishes FILE itself, as the action does)
        write(lambda: outputs.append_summary(told.summary, Path(ctx.step_summary)))


def _write_timings(
    verdict: Verdict, path: Path, variant: str, console: Console, sections: Mapping[str, Any] | None = None
) -> None:
    """Fold the durations into the store; a failure is a warning: the verdict is about this run's
    tests, and a store that cannot be written costs the next plan its estimates, nothing else."""
    try:
        recorded, warnings = outputs.write_timings(verdict, path, variant=variant, sections=sections)
    except (InputError, OSError) as err:
        console.warning(f"ci-shards: the timings were not written back: {err} (the verdict stands)")
        return
    for warning in warnings:
        console.warning(warning)
    console.line(f"ci-shards: {recorded}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class CoverageOptions:
    out: Path
    fail_under: float | None = None
    base: str | None = None


def coverage_options(options: AggregateOptions) -> CoverageOptions | None:
    if options.coverage_out is None:
        if options.fail_under is not None or options.coverage_base is not None:
            msg = "--fail-under and --coverage-base need --coverage-out DIR (the folded coverage)"
            raise UsageError(msg)
        return None
    return CoverageOptions(out=options.coverage_out, fail_under=options.fail_under, base=options.coverage_base)


def _fold_coverage(
    plan: Plan, dirs: Sequence[Path], options: CoverageOptions | None, env: Mapping[str, str], console: Console
) -> Reported | None:
    """The folded coverage's summary section, exit code and figures (docs/coverage.md); None without --coverage-out."""
    if options is None:
        return None
    from ci_shards.coverage.publish import publish_reported  # noqa: PLC0415  (coverage.py only when asked)

    return publish_reported(
        plan,
        dirs,
        out=options.out,
        root=Path.cwd(),
        fail_under=options.fail_under,
        base=options.base,
        env=env,
        console=console,
    )


def _history_options(options: AggregateOptions) -> HistoryOptions:
    """The flags of the test history, the config's ``fail-on`` and ``quarantine`` behind them."""
    return HistoryOptions(
        fail_on=FailOn(options.fail_on),
        history=options.history,
        record=options.record_history,
        base_branch=options.base_branch,
        max_base_age_days=options.max_base_age,
        quarantine=options.quarantine,
        quarantine_source=options.config_source,
    )


def every_in(github_mode: bool, *files: Path | None) -> str:
    written = [*(["the job summary"] if github_mode else []), *(str(f) for f in files if f)]
    return complete_in(written, "the shard folders' failures.jsonl (or rerun with --failures FILE)")


# --------------------------------------------------------------------------------------------
# comment


def run_comment(
    *,
    plan_path: Path | None,
    dirs: Sequence[Path],
    body_file: Path | None,
    mode: CommentMode,
    key: str | None,
    pr: int | None,
    repository: str | None,
    flaky_result: FlakyResult,
    env: Mapping[str, str],
) -> int:
    if (body_file is None) == (plan_path is None):
        msg = "comment: give either --plan with shard folders, or --body-file"
        raise UsageError(msg)
    if plan_path is not None and not dirs:  # no folders would aggregate to "every shard is missing"
        msg = "comment: --plan needs at least one DIR holding the shard artifact folders"
        raise UsageError(msg)
    if body_file is not None and dirs:
        msg = "comment: DIR arguments go with --plan, not with --body-file"
        raise UsageError(msg)
    console = console_for(env)
    ctx = _with_event(github.GitHubContext.from_env(env), env, console)
    if repository:
        ctx = dataclasses.replace(ctx, repository=repository)
    if pr is not None and ctx.is_fork_pr:  # an explicit PR (workflow_run recipe) runs with a write token
        ctx = dataclasses.replace(ctx, event={})
    if body_file is not None:
        try:
            body = body_file.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            raise InputError(body_file, f"cannot read the comment body: {err.strerror or err}") from None
        verdict = None
    else:
        assert plan_path is not None
        verdict = aggregate_dirs(load_plan(plan_path), dirs, flaky_result=flaky_result)
        body = None
    _post_comment(
        verdict,
        ctx=ctx,
        mode=mode,
        key=key or ctx.comment_key,
        pr=pr,
        console=console,
        body=body,
        summary=False,
    )
    return EXIT_OK
