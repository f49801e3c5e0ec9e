"""The work behind the aggregate stage's subcommands: ``aggregate``, ``junit merge|summary``, ``comment``.

Imported only when one of them runs (``commands.aggregate`` holds the light parser), so the
reporting work (jinja2, the report package: ~50-90 ms of imports, docs/benchmarks.md) costs nothing to
``plan``, ``matrix`` or ``run``.

Each handler turns the Namespace into the stage's typed options (``options.typed``, flags over the config) or
keyword arguments of one stage function here; the stage functions read the environment only through the
``env`` mapping they are given.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ci_shards.commands import history_work
from ci_shards.common import outfile
from ci_shards.common.console import Console, console_for, plural
from ci_shards.common.errors import EXIT_OK, EXIT_USAGE, InputError, UsageError
from ci_shards.junit import JUnitError, expand_patterns, read_many, write_junit_suites
from ci_shards.model.plan import Plan
from ci_shards.model.planfile import load_plan
from ci_shards.options import config
from ci_shards.options.typed import AggregateOptions, aggregate_options
from ci_shards.options.values import CommentMode
from ci_shards.report import comment as pr_comment
from ci_shards.report import github, joblinks, outputs
from ci_shards.report.aggregate import FlakyResult, Totals, Verdict, aggregate_dirs
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


def run_aggregate(
    *,
    plan_path: Path,
    dirs: Sequence[Path],
    junit_out: Path | None,
    failures_out: Path | None,
    summary_out: Path | None,
    github_mode: bool,
    timings_out: Path | None,
    timings_variant: str,
    comment: bool,
    comment_mode: CommentMode,
    comment_key: str | None,
    comment_out: Path | None,
    flaky_result: FlakyResult,
    annotations: bool,
    output_format: str,
    env: Mapping[str, str],
    allow_empty: bool = False,
    history_opts: history_work.HistoryOptions | None = None,
    coverage: CoverageOptions | None = None,
) -> int:
    plan = load_plan(plan_path)
    console = console_for(env)
    ctx = github.GitHubContext.from_env(env)  # the event payload is read only for the comment
    if github_mode and not ctx.step_summary:  # a usage error: said before anything is written
        msg = "--github: GITHUB_STEP_SUMMARY is not set (not on GitHub Actions? use --summary FILE)"
        raise UsageError(msg)
    triaged = history_work.decide_with_history(
        plan,
        dirs,
        flaky_result=flaky_result,
        allow_empty=allow_empty,
        opts=history_opts or history_work.HistoryOptions(),
        store=timings_out,
        env=env,
        console=console,
    )
    verdict, triage = triaged.verdict, triaged.triage
    covered = _fold_coverage(plan, dirs, coverage, env, console)
    extra = covered.markdown if covered is not None else ""
    links = _job_links(verdict, ctx)
    # Every output that can be written is written: one that cannot is an error line (exit 2 at the end),
    # never a reason to skip the others. The timings are last and only warn: they are for the next run.
    unwritten: list[InputError] = []

    def write(action: Callable[[], None]) -> None:
        try:
            action()
        except InputError as err:
            console.error(str(err))
            unwritten.append(err)

    summary = render_summary(verdict, triage=triage, shard_links=links) + extra
    if junit_out:
        write(lambda: outputs.write_merged_junit(verdict, junit_out))
    if failures_out:
        write(lambda: outputs.write_failures(verdict, failures_out))
    if summary_out:  # a file of the caller's: written, so running twice never holds two verdicts
        write(lambda: outputs.write_text(summary_out, summary))
    if github_mode:  # the job summary is shared by every step of the job: appended, as GitHub expects
        write(lambda: outputs.append_summary(summary, Path(ctx.step_summary)))
    key = comment_key or ctx.comment_key
    if comment_out:
        body = pr_comment.with_state(
            render_comment(verdict, key=key, run_url=ctx.run_url, triage=triage, shard_links=links) + extra,
            pr_comment.result_state(verdict),
            run_id=ctx.run_id,
            run_attempt=ctx.run_attempt,
        )
        write(lambda: outputs.write_text(comment_out, body))
    console.untrusted(render_terminal(verdict, every_in=every_in(github_mode, summary_out, failures_out)))
    triage_text = render_triage_terminal(triage)
    if triage_text:
        console.untrusted(triage_text)
    if annotations and (github_mode or ctx.actions):
        for line in github.annotation_lines(verdict, workspace=env.get("GITHUB_WORKSPACE", "")):
            console.line(line)
    if comment:
        fell_back = _post_comment(
            verdict,
            ctx=_with_event(ctx, env, console),
            mode=comment_mode,
            key=key,
            pr=None,
            console=console,
            triage=triage,
            extra=extra,
            shard_links=links,
        )
        if fell_back and ctx.step_summary and not github_mode and summary_out is None:
            # "falls back to the job summary": make sure it is there even without --github / --summary
            # (with --summary FILE the caller publishes FILE itself, as the action does)
            write(lambda: outputs.append_summary(summary, Path(ctx.step_summary)))
    if output_format == "json":
        payload = {**outputs.verdict_json(verdict), "triage": triage_json(triage)}
        payload["coverage"] = dict(covered.figures) if covered is not None else None  # None: not folded
        sys.stdout.write(json.dumps(payload, sort_keys=True, indent=2) + "\n")
    if timings_out:
        history = history_work.history_section(timings_out, triaged, console)
        _write_timings(verdict, timings_out, timings_variant, console, history)
    coverage_code = covered.exit_code if covered is not None else EXIT_OK
    return max(EXIT_USAGE if unwritten else verdict.exit_code, coverage_code)


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


def _aggregate_handler(args: argparse.Namespace) -> int:
    options = aggregate_options(vars(args), config.load_config(Path.cwd()))
    return run_aggregate(
        plan_path=options.plan,
        dirs=options.dirs,
        junit_out=options.junit_out,
        failures_out=options.failures_out,
        summary_out=options.summary_out,
        github_mode=options.github,
        timings_out=options.timings_out,
        timings_variant=options.timings_variant,
        comment=options.comment,
        comment_mode=options.comment_mode,
        comment_key=options.comment_key,
        comment_out=options.comment_out,
        flaky_result=options.flaky_result,
        annotations=options.annotations,
        output_format=options.output_format,
        env=os.environ,
        allow_empty=options.allow_empty,
        history_opts=_history_options(options),
        coverage=coverage_options(options),
    )


def _history_options(options: AggregateOptions) -> history_work.HistoryOptions:
    """The flags of the test history, the config's ``fail-on`` and ``quarantine`` behind them."""
    return history_work.HistoryOptions(
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
# junit merge / junit summary


def _read_all(patterns: Sequence[str], console: Console) -> tuple[list[tuple[str, list[Any]]], list[JUnitError]]:
    suites, errors = read_many(expand_patterns(patterns))
    for err in errors[1:]:
        console.error(str(err))
    return suites, errors


def junit_merge(*, patterns: Sequence[str], out: Path, name: str, env: Mapping[str, str]) -> int:
    console = console_for(env)
    suites, errors = read_many(expand_patterns(patterns))
    # partial results are kept even when a file is bad
    if outfile.is_stdout(out):
        _merged_junit_to_stdout(suites, name)  # a closed stdout is cli's quiet BrokenPipeError, not a bad file
    else:
        try:
            write_junit_suites(suites, out, name=name)
        except OSError as err:
            raise InputError(out, f"cannot write: {err.strerror or err}") from None
    totals = Totals.of(c for _name, cases in suites for c in cases)
    said = f"merged {plural(len(suites), 'file')}, {plural(totals.tests, 'test')} into {outfile.describe(out)}"
    if errors:  # the partial merge is written, but the line must not read as success before the error
        console.line(f"ci-shards: {said}; {plural(len(errors), 'unreadable file')} left out:")
        for problem in errors[1:]:
            console.error(str(problem))
        raise errors[0]
    console.line(f"ci-shards: {said}")
    return EXIT_OK


def _merged_junit_to_stdout(suites: Sequence[tuple[str, Sequence[Any]]], name: str) -> None:
    """``junit merge -o -``: the writer streams to a file, so stream it through a temporary one."""
    with tempfile.TemporaryDirectory(prefix="ci-shards-merge-") as tmp:
        merged = Path(tmp) / "merged.xml"
        write_junit_suites(suites, merged, name=name)
        with merged.open(encoding="utf-8") as handle:
            shutil.copyfileobj(handle, sys.stdout)


def junit_summary(*, patterns: Sequence[str], output_format: str, env: Mapping[str, str]) -> int:
    console = console_for(env)
    suites, errors = _read_all(patterns, console)
    if errors:
        raise errors[0]
    t = Totals.of(c for _name, cases in suites for c in cases)
    counts = t.to_json()
    if output_format == "json":
        payload = {"schema": outputs.JUNIT_SUMMARY_SCHEMA, "files": len(suites), **counts}
        sys.stdout.write(json.dumps(payload, sort_keys=True, indent=2) + "\n")
    else:
        sys.stdout.write(f"files: {len(suites)}\n" + "".join(f"{k}: {v}\n" for k, v in counts.items()))
    return EXIT_OK


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


def _comment_handler(args: argparse.Namespace) -> int:
    return run_comment(
        plan_path=args.plan,
        dirs=args.dirs,
        body_file=args.body_file,
        mode=CommentMode(args.mode),
        key=args.key,
        pr=args.pr,
        repository=args.repo,
        flaky_result=FlakyResult(args.flaky_result),
        env=os.environ,
    )


# --------------------------------------------------------------------------------------------
# parsers


def junit_merge_handler(args: argparse.Namespace) -> int:
    return junit_merge(patterns=args.patterns, out=args.output, name=args.name, env=os.environ)


def junit_summary_handler(args: argparse.Namespace) -> int:
    return junit_summary(patterns=args.patterns, output_format=args.format, env=os.environ)
