"""The work behind the aggregate stage's subcommands: ``aggregate``, ``junit merge|summary``, ``comment``.

Imported only when one of them runs (``commands.aggregate`` holds the light parser), so the
reporting dependencies (jinja2, junitparser, requests) cost nothing to ``plan``, ``matrix`` or ``run``.

Each handler unpacks the Namespace into keyword arguments of one stage function here; the stage
functions read the environment only through the ``env`` mapping they are given.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ci_shards import comment as pr_comment
from ci_shards import github, joblinks, outputs
from ci_shards.aggregate import FlakyResult, Totals, Verdict, aggregate_dirs
from ci_shards.console import Console, console_for
from ci_shards.errors import EXIT_OK, InputError, UsageError
from ci_shards.junit import JUnitError, expand_patterns, read_many, write_junit_suites
from ci_shards.model import CommentMode
from ci_shards.planfile import load_plan
from ci_shards.report import comment_marker, render_comment, render_summary, render_terminal

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
            render_comment(verdict, key=key, run_url=ctx.run_url, shard_links=shard_links),
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
) -> int:
    plan = load_plan(plan_path)
    console = console_for(env)
    ctx = github.GitHubContext.from_env(env)  # the event payload is read only for the comment
    verdict = aggregate_dirs(plan, dirs, flaky_result=flaky_result)
    links = _job_links(verdict, ctx)
    if junit_out:
        outputs.write_merged_junit(verdict, junit_out)
    if failures_out:
        outputs.write_failures(verdict, failures_out)
    summary_target = summary_out
    if github_mode and summary_target is None:
        if not ctx.step_summary:
            msg = "--github: GITHUB_STEP_SUMMARY is not set (not on GitHub Actions? use --summary FILE)"
            raise UsageError(msg)
        summary_target = Path(ctx.step_summary)
    if summary_target:
        outputs.append_summary(render_summary(verdict, shard_links=links), summary_target)
    key = comment_key or ctx.comment_key
    if comment_out:
        body = pr_comment.with_state(
            render_comment(verdict, key=key, run_url=ctx.run_url, shard_links=links),
            pr_comment.result_state(verdict),
            run_id=ctx.run_id,
            run_attempt=ctx.run_attempt,
        )
        outputs.write_text(comment_out, body)
    console.untrusted(render_terminal(verdict))
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
            shard_links=links,
        )
        if fell_back and ctx.step_summary and summary_target is None:
            # "falls back to the job summary": make sure it is there even without --github / --summary
            # (with --summary FILE the caller publishes FILE itself, as the action does)
            outputs.append_summary(render_summary(verdict, shard_links=links), Path(ctx.step_summary))
    if output_format == "json":
        sys.stdout.write(json.dumps(outputs.verdict_json(verdict), sort_keys=True, indent=2) + "\n")
    if timings_out:  # last: a timings problem must not cost the summary, annotations or comment
        recorded, warnings = outputs.write_timings(verdict, timings_out, variant=timings_variant)
        for warning in warnings:
            console.warning(warning)
        console.line(f"ci-shards: {recorded}")
    return verdict.exit_code


def _aggregate_handler(args: argparse.Namespace) -> int:
    return run_aggregate(
        plan_path=args.plan,
        dirs=args.dirs,
        junit_out=args.junit,
        failures_out=args.failures,
        summary_out=args.summary,
        github_mode=args.github,
        timings_out=args.timings_out,
        timings_variant=args.timings_variant,
        comment=args.comment,
        comment_mode=CommentMode(args.comment_mode),
        comment_key=args.comment_key,
        comment_out=args.comment_out,
        flaky_result=FlakyResult(args.flaky_result),
        annotations=not args.no_annotations,
        output_format=args.format,
        env=os.environ,
    )


# --------------------------------------------------------------------------------------------
# junit merge / junit summary


def _read_all(patterns: Sequence[str], console: Console) -> tuple[list[tuple[str, list[Any]]], list[JUnitError]]:
    suites, errors = read_many(expand_patterns(patterns))
    for err in errors[1:]:
        console.error(str(err))
    return suites, errors


def junit_merge(*, patterns: Sequence[str], out: Path, name: str, env: Mapping[str, str]) -> int:
    console = console_for(env)
    suites, errors = _read_all(patterns, console)
    try:
        write_junit_suites(suites, out, name=name)  # partial results are kept even when a file is bad
    except OSError as err:
        raise InputError(out, f"cannot write: {err.strerror or err}") from None
    totals = Totals.of(c for _name, cases in suites for c in cases)
    console.line(f"ci-shards: merged {len(suites)} files, {totals.tests} tests into {out}")
    if errors:
        raise errors[0]
    return EXIT_OK


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
