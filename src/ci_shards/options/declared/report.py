"""The options of the aggregate stage: ``aggregate`` and ``comment``."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from ci_shards.options.spec import Option
from ci_shards.options.values import CommentMode, parse_days

# the aggregate stage's options that carry a config key
AGGREGATE_OPTIONS: Final = (
    Option(
        flags=("--allow-empty",),
        action="store_true",
        commands=frozenset({"aggregate"}),
        config="allow-empty",
        action_input="allow-empty",
        help="a plan with no items, or a run in which no test ran, passes; without it that fails the verdict"
        " (default: config 'allow-empty', else off)",
    ),
    Option(
        flags=("--fail-on",),
        choices=("new", "any"),
        default=None,
        commands=frozenset({"aggregate"}),
        config="fail-on",
        action_input="fail-on",
        help="which test failures fail the build: any, or only new ones (known, flaky and quarantined failures are"
        " reported but pass) (default: config 'fail-on', else any)",
    ),
)

_AGGREGATE: Final = frozenset({"aggregate"})
_COMMENT: Final = frozenset({"comment"})
_COMMENT_MODES: Final = tuple(m.value for m in CommentMode)
_SHARD_DIRS_HELP: Final = "folders holding the shard artifact folders"
_COMMENT_KEY_HELP: Final = "comment identity (default: $GITHUB_WORKFLOW/$GITHUB_JOB)"
_COMMENT_MODE_HELP: Final = "when to write the comment (default: always)"

# aggregate's and comment's options that come before --flaky-result in their --help
AGGREGATE_HEAD: Final = (
    Option(
        flags=("--plan",),
        type=Path,
        metavar="FILE",
        required=True,
        commands=_AGGREGATE,
        help="plan.json of this run (required)",
    ),
    Option(flags=("dirs",), nargs="+", type=Path, metavar="DIR", commands=_AGGREGATE, help=_SHARD_DIRS_HELP),
    Option(
        flags=("--junit-out",),
        dest="junit",
        type=Path,
        metavar="FILE",
        commands=_AGGREGATE,
        help="write the merged JUnit XML here (default: not written)",
    ),
    # --junit is an input of run and local: here its old name for --junit-out
    Option(flags=("--junit",), dest="junit", type=Path, commands=_AGGREGATE, deprecated_for="--junit-out", help=""),
    Option(
        flags=("--failures",),
        type=Path,
        metavar="FILE",
        commands=_AGGREGATE,
        help="write every failure record as JSON lines (default: not written)",
    ),
    Option(
        flags=("--summary",),
        type=Path,
        metavar="FILE",
        commands=_AGGREGATE,
        help="write the Markdown summary to FILE, replacing it; combines with --github (default: none)",
    ),
    Option(
        flags=("--github",),
        action="store_true",
        commands=_AGGREGATE,
        help="GitHub Actions: append the summary to $GITHUB_STEP_SUMMARY and emit annotations (default: off)",
    ),
    Option(
        flags=("--timings-out",),
        type=Path,
        metavar="FILE",
        commands=_AGGREGATE,
        help="fold measured durations into this timings file (default: none)",
    ),
    Option(
        flags=("--variant",),
        dest="timings_variant",
        default="",
        metavar="KEY",
        commands=_AGGREGATE,
        action_input="variant",
        help="timings variant key, e.g. OS/Python (default: none)",
    ),
    Option(
        flags=("--timings-variant",),
        dest="timings_variant",
        commands=_AGGREGATE,
        deprecated_for="--variant",
        help="",
    ),
    Option(
        flags=("--comment",),
        action="store_true",
        commands=_AGGREGATE,
        action_input="comment",
        help="upsert the PR comment (default: off)",
    ),
    Option(
        flags=("--comment-mode",),
        choices=_COMMENT_MODES,
        default="always",
        commands=_AGGREGATE,
        action_input="comment-mode",
        help=_COMMENT_MODE_HELP,
    ),
    Option(
        flags=("--comment-key",), metavar="KEY", commands=_AGGREGATE, help=_COMMENT_KEY_HELP
    ),  # its input is comment's
    Option(
        flags=("--comment-out",),
        type=Path,
        metavar="FILE",
        commands=_AGGREGATE,
        help="also write the comment body to FILE (default: none)",
    ),
    Option(
        flags=("--plan",), type=Path, metavar="FILE", commands=_COMMENT, help="plan.json (with DIR...) (default: none)"
    ),
    Option(flags=("dirs",), nargs="*", type=Path, metavar="DIR", commands=_COMMENT, help=_SHARD_DIRS_HELP),
    Option(
        flags=("--body-file",),
        type=Path,
        metavar="FILE",
        commands=_COMMENT,
        help="post this rendered body instead; only a body from a trusted workflow (default: none)",
    ),
    Option(
        flags=("--comment-mode",),
        dest="mode",
        choices=_COMMENT_MODES,
        default="always",
        commands=_COMMENT,
        action_input="comment-mode",
        help=_COMMENT_MODE_HELP,
    ),
    Option(
        flags=("--mode",),
        dest="mode",
        choices=_COMMENT_MODES,
        commands=_COMMENT,
        deprecated_for="--comment-mode",
        help="",
    ),
    Option(
        flags=("--comment-key",),
        dest="key",
        metavar="KEY",
        commands=_COMMENT,
        action_input="comment-key",
        help=_COMMENT_KEY_HELP,
    ),
    Option(flags=("--key",), dest="key", commands=_COMMENT, deprecated_for="--comment-key", help=""),
    Option(
        flags=("--pr",),
        type=int,
        commands=_COMMENT,
        action_input="pr",
        help="pull request number (default: from $GITHUB_EVENT_PATH)",
    ),
    Option(flags=("--repo",), commands=_COMMENT, help="owner/name (default: $GITHUB_REPOSITORY)"),
)

# the test history (docs/aggregate.md, "Test history") and the rest of aggregate, after --fail-on
AGGREGATE_TAIL: Final = (
    Option(
        flags=("--history",),
        type=Path,
        metavar="STORE",
        commands=_AGGREGATE,
        help="timings store holding the base branch's test history (default: the --timings-out file)",
    ),
    Option(
        flags=("--record-history",),
        action="store_true",
        commands=_AGGREGATE,
        action_input="record-history",
        help="record this run's outcomes into the --timings-out store on any branch (default: only on the"
        " repository's default branch)",
    ),
    Option(
        flags=("--base-branch",),
        metavar="NAME",
        commands=_AGGREGATE,
        help="branch whose history failures are compared with (default: $GITHUB_BASE_REF, else this run's branch)",
    ),
    Option(
        flags=("--max-base-age",),
        type=parse_days,
        default=14,
        metavar="DAYS",
        commands=_AGGREGATE,
        help="a base result older than this never makes a failure known (default: 14)",
    ),
    Option(
        flags=("--no-annotations",),
        action="store_true",
        commands=_AGGREGATE,
        help="do not emit ::error annotations on GitHub (default: emit)",
    ),
    Option(
        flags=("--format",),
        choices=("text", "json"),
        default="text",
        commands=_AGGREGATE,
        help="stdout: json verdict (default: text)",
    ),
    Option(
        flags=("--coverage-out",),
        type=Path,
        metavar="DIR",
        commands=_AGGREGATE,
        help="fold the shards' coverage into DIR/coverage.json, coverage.xml and lcov.info (default: no fold)",
    ),
)

# the gate on the folded coverage (aggregate and local)
COVERAGE_GATE: Final = (
    Option(
        flags=("--fail-under",),
        type=float,
        metavar="P",
        commands=frozenset({"local", "aggregate"}),
        help="fail when complete coverage is below P percent, or when coverage is partial (default: no gate)",
    ),
    Option(
        flags=("--coverage-base",),
        metavar="REF",
        commands=frozenset({"local", "aggregate"}),
        help="git ref the change is compared with for changed-line coverage (default: origin/$GITHUB_BASE_REF "
        "on a pull request, else skipped)",
    ),
)
