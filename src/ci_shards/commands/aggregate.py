"""The arguments of the aggregate stage's subcommands: ``aggregate``, ``junit merge``, ``junit summary``, ``comment``.

Only the arguments live here (the subcommands are in ``commands.COMMANDS``); the work is in
``commands.aggregate_work``, imported when a handler runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from ci_shards.commands.aliases import add_deprecated_alias
from ci_shards.model import CommentMode
from ci_shards.options.declared import OPTIONS
from ci_shards.options.spec import add_options, for_command


def _modes() -> list[str]:
    return [m.value for m in CommentMode]


def work(name: str) -> Callable[[argparse.Namespace], int]:
    """A handler that imports the work module only when the subcommand runs: with the report package and
    jinja2 it costs every other subcommand's start-up ~50-90 ms (docs/benchmarks.md)."""

    def handler(args: argparse.Namespace) -> int:
        from ci_shards.commands import aggregate_work  # noqa: PLC0415

        return int(getattr(aggregate_work, name)(args))

    return handler


def _positive_days(text: str) -> int:
    if not text.isdigit():
        msg = f"must be a whole number of days, not {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return int(text)


def _history_arguments(agg: argparse.ArgumentParser) -> None:
    """The test history (docs/aggregate.md, "Test history"); ``--fail-on`` is declared in options.declared."""
    agg.add_argument(
        "--history",
        type=Path,
        metavar="STORE",
        help="timings store holding the base branch's test history (default: the --timings-out file)",
    )
    agg.add_argument(
        "--record-history",
        action="store_true",
        help="record this run's outcomes into the --timings-out store on any branch (default: only on the"
        " repository's default branch)",
    )
    agg.add_argument(
        "--base-branch",
        metavar="NAME",
        help="branch whose history failures are compared with (default: $GITHUB_BASE_REF, else this run's branch)",
    )
    agg.add_argument(
        "--max-base-age",
        type=_positive_days,
        default=14,
        metavar="DAYS",
        help="a base result older than this never makes a failure known (default: 14)",
    )


def _declared(parser: argparse.ArgumentParser, command: str, *names: str) -> None:
    """Add the options ``names`` of ``command`` as options.declared declares them."""
    add_options(parser, [o for o in for_command(OPTIONS, command) if o.name in names])


def add_coverage_options(parser: argparse.ArgumentParser) -> None:
    """The fold of every shard's coverage (docs/coverage.md); run from the repository root."""
    parser.add_argument(
        "--coverage-out",
        type=Path,
        metavar="DIR",
        help="fold the shards' coverage into DIR/coverage.json, coverage.xml and lcov.info (default: no fold)",
    )
    _declared(parser, "aggregate", "--fail-under", "--coverage-base")


def aggregate_arguments(agg: argparse.ArgumentParser) -> None:
    agg.add_argument("--plan", type=Path, required=True, help="plan.json of this run (required)")
    agg.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="folders holding the shard artifact folders")
    agg.add_argument(
        "--junit-out",
        dest="junit",
        type=Path,
        metavar="FILE",
        help="write the merged JUnit XML here (default: not written)",
    )
    add_deprecated_alias(agg, "--junit", new="--junit-out", dest="junit", type=Path)  # --junit is an input elsewhere
    agg.add_argument("--failures", type=Path, help="write every failure record as JSON lines (default: not written)")
    agg.add_argument(
        "--summary",
        type=Path,
        help="write the Markdown summary to FILE, replacing it; combines with --github (default: none)",
    )
    agg.add_argument(
        "--github",
        action="store_true",
        help="GitHub Actions: append the summary to $GITHUB_STEP_SUMMARY and emit annotations (default: off)",
    )
    agg.add_argument("--timings-out", type=Path, help="fold measured durations into this timings file (default: none)")
    agg.add_argument(
        "--variant",
        dest="timings_variant",
        default="",
        metavar="KEY",
        help="timings variant key, e.g. OS/Python (default: none)",
    )
    add_deprecated_alias(agg, "--timings-variant", new="--variant", dest="timings_variant")
    agg.add_argument("--comment", action="store_true", help="upsert the PR comment (default: off)")
    agg.add_argument(
        "--comment-mode", choices=_modes(), default="always", help="when to write the comment (default: always)"
    )
    agg.add_argument("--comment-key", help="comment identity (default: $GITHUB_WORKFLOW/$GITHUB_JOB)")
    agg.add_argument("--comment-out", type=Path, help="also write the comment body to FILE (default: none)")
    _declared(agg, "aggregate", "--flaky-result", "--allow-empty", "--fail-on")
    _history_arguments(agg)
    agg.add_argument(
        "--no-annotations", action="store_true", help="do not emit ::error annotations on GitHub (default: emit)"
    )
    agg.add_argument("--format", choices=["text", "json"], default="text", help="stdout: json verdict (default: text)")
    add_coverage_options(agg)


def junit_merge_arguments(merge: argparse.ArgumentParser) -> None:
    merge.add_argument("patterns", nargs="+", metavar="FILE|GLOB", help="JUnit files or glob patterns")
    merge.add_argument(
        "-o", "--output", type=Path, required=True, help="the merged file to write, - for stdout (required)"
    )
    merge.add_argument("--name", default="ci-shards", help="name of the <testsuites> root (default: ci-shards)")


def junit_summary_arguments(summary: argparse.ArgumentParser) -> None:
    summary.add_argument("patterns", nargs="+", metavar="FILE|GLOB", help="JUnit files or glob patterns")
    summary.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")


def comment_arguments(com: argparse.ArgumentParser) -> None:
    com.add_argument("--plan", type=Path, help="plan.json (with DIR...) (default: none)")
    com.add_argument("dirs", nargs="*", type=Path, metavar="DIR", help="folders holding the shard artifact folders")
    com.add_argument(
        "--body-file",
        type=Path,
        help="post this rendered body instead; only a body from a trusted workflow (default: none)",
    )
    com.add_argument(
        "--comment-mode",
        dest="mode",
        choices=_modes(),
        default="always",
        help="when to write the comment (default: always)",
    )
    add_deprecated_alias(com, "--mode", new="--comment-mode", dest="mode", choices=_modes())
    com.add_argument(
        "--comment-key", dest="key", metavar="KEY", help="comment identity (default: $GITHUB_WORKFLOW/$GITHUB_JOB)"
    )
    add_deprecated_alias(com, "--key", new="--comment-key", dest="key")
    com.add_argument("--pr", type=int, help="pull request number (default: from $GITHUB_EVENT_PATH)")
    com.add_argument("--repo", help="owner/name (default: $GITHUB_REPOSITORY)")
    _declared(com, "comment", "--flaky-result")
