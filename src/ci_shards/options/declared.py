"""Every declared option, in the order each subcommand lists them, and every config key.

Adding an option: one ``Option`` here (its flags, help with its default, the subcommands that take it, the config
key and action input if any), one field in the stage's options object (``options.typed``), and, for a config key,
one ``ConfigKey`` below; docs/configuration.md's key table is regenerated from these
(``CI_SHARDS_REGEN_GOLDEN=1 pytest tests/unit/test_options.py``).
"""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from typing import Final

from ci_shards.judge import FlakyResult
from ci_shards.model import RESULTS_DIR, CommentMode, Granularity
from ci_shards.options.spec import ConfigKey, ConfigKind, Option
from ci_shards.options.values import (
    parse_days,
    parse_duration,
    parse_seconds,
    parse_signal,
    parse_size,
    parse_timeout,
)
from ci_shards.plan.matrix import GITHUB_MATRIX_MAX
from ci_shards.plan.packing import STRATEGIES
from ci_shards.select.settings import SelectMode

DEFAULT_JOB_MEMORY: Final = 1 << 30
DEFAULT_MAX_SHARDS: Final = GITHUB_MATRIX_MAX

PLANNING: Final = frozenset({"plan", "matrix", "local"})  # the subcommands that make a plan
RUNNING: Final = frozenset({"run", "local"})  # the subcommands that run shards

_ITEMS = "items (at least one source)"
_SELECT = "change-based selection (docs/selection.md)"
_REPORTS = "reports (as aggregate writes them)"

ALLOW_EMPTY_HELP: Final = (
    "let a plan with no items (or a run in which no test ran) pass; without it that is exit 1"
    " (default: config 'allow-empty', else off)"
)
PYTEST_ARGS_HELP: Final = "with --pytest: arguments for collection, after -- (default: none)"

PLAN_OPTIONS: Final = (
    Option(
        flags=("--items",),
        action="append",
        metavar="FILE|-",
        group=_ITEMS,
        commands=PLANNING,
        action_input="items",
        help="file with one item per line, or - for stdin (default: none)",
    ),
    Option(
        flags=("--glob",),
        action="extend",
        nargs="+",
        metavar="PATTERN",
        group=_ITEMS,
        commands=PLANNING,
        action_input="glob",
        help="files matching these globs are the items, ** recurses (default: none)",
    ),
    Option(
        flags=("--pytest",),
        action="store_true",
        group=_ITEMS,
        commands=PLANNING,
        action_input="pytest",
        help="collect node ids with 'python -m pytest --collect-only -q'; pytest arguments follow -- (default: off)",
    ),
    Option(
        flags=("--from-timings",),
        action="store_true",
        group=_ITEMS,
        commands=PLANNING,
        help="the items are the keys of the --durations files; with --glob, new files beside them and timings of"
        " deleted files dropped (default: off)",
    ),
    Option(
        flags=("--discover",),
        action="store_true",
        group=_ITEMS,
        commands=PLANNING,
        action_input="discover",
        help="the test files pytest's own settings (testpaths, python_files) find on disk, merged with the timings:"
        " no test dependencies needed; path arguments after -- narrow it (default: off)",
    ),
    Option(
        flags=("--durations",),
        action="append",
        metavar="FILE",
        group="timings",
        commands=PLANNING,
        config="timings",
        action_input="durations",
        help="timings: pytest-split .test_durations, JUnit XML or a ci-shards store; repeatable, and per item"
        " the first file that has it wins (default: config 'timings', else none)",
    ),
    Option(
        flags=("--cached-durations",),
        action="append",
        metavar="FILE",
        group="timings",
        commands=PLANNING,
        action_input="timings-path",
        help="timings restored from a CI cache, read before --durations; a missing or unreadable file is a warning"
        " and is ignored, so a corrupt cache never blocks planning; repeatable (default: none)",
    ),
    Option(
        flags=("--durations-root",),
        metavar="DIR",
        group="timings",
        commands=PLANNING,
        help="the folder the timings' ids are relative to, from the working directory (e.g. the package folder"
        " pytest ran in when they were recorded); they are rebased onto the plan's ids (default: the plan's"
        " rootdir)",
    ),
    Option(
        flags=("--allow-unmatched-timings",),
        action="store_true",
        group="timings",
        commands=PLANNING,
        help="plan even when under half of the items match a timing, by path or path suffix (default: off: exit 2)",
    ),
    Option(
        flags=("--variant",),
        group="timings",
        commands=PLANNING,
        config="variant",
        action_input="variant",
        help="timings variant key, e.g. linux-py3.12; falls back to other variants (default: config, else none)",
    ),
    Option(
        flags=("--shards",),
        metavar="N|auto",
        group="shards",
        commands=PLANNING,
        config="shards",
        action_input="shards",
        help="number of shards, or auto with --target-seconds (default: config, else auto when --target-seconds is"
        " given)",
    ),
    Option(
        flags=("--target-seconds",),
        type=float,
        metavar="S",
        group="shards",
        commands=PLANNING,
        config="target-seconds",
        action_input="target-seconds",
        help="for --shards auto: the slowest shard plus overhead should fit this (default: config)",
    ),
    Option(
        flags=("--shard-overhead",),
        type=float,
        metavar="S",
        group="shards",
        commands=PLANNING,
        config="shard-overhead",
        help="for --shards auto: setup seconds every shard pays (default: config, else 0)",
    ),
    Option(
        flags=("--max-shards",),
        type=int,
        metavar="M",
        group="shards",
        commands=PLANNING,
        config="max-shards",
        help=f"for --shards auto: at most this many (default: config, else {DEFAULT_MAX_SHARDS}, GitHub's matrix"
        " limit)",
    ),
    Option(
        flags=("--granularity",),
        choices=tuple(g.value for g in Granularity),
        group="balance",
        commands=PLANNING,
        config="granularity",
        action_input="granularity",
        help="test, file, or auto: files whole unless balance needs a cut (default: config, else auto)",
    ),
    Option(
        flags=("--keep-together",),
        action="append",
        metavar="RULE",
        group="balance",
        commands=PLANNING,
        config="keep-together",
        help="never split: 'class' (file::Class) or a glob whose matches stay together; repeatable"
        " (default: config, else none)",
    ),
    Option(
        flags=("--weight",),
        action="append",
        metavar="PATTERN=FACTOR",
        group="balance",
        commands=PLANNING,
        config="weights",
        help="multiply the estimate of items matching PATTERN; repeatable (default: config 'weights', else none)",
    ),
    Option(
        flags=("--max-items-per-shard",),
        type=int,
        metavar="N",
        group="balance",
        commands=PLANNING,
        config="max-items-per-shard",
        help="at most N items per shard (default: config, else no limit)",
    ),
    Option(
        flags=("--cut-cost",),
        type=float,
        metavar="S",
        group="balance",
        commands=PLANNING,
        config="cut-cost",
        help="setup seconds a file repeats in each extra shard it is cut into (default: config, else 0)",
    ),
    Option(
        flags=("--strategy",),
        choices=tuple(sorted(STRATEGIES)),
        group="balance",
        commands=PLANNING,
        config="strategy",
        help="packing strategy (default: config, else balanced)",
    ),
    Option(
        flags=("--config",),
        metavar="FILE",
        commands=PLANNING,
        help="config file (default: ci-shards.yml, else [tool.ci-shards] in pyproject.toml)",
    ),
    Option(
        flags=("--select",),
        choices=tuple(m.value for m in SelectMode),
        group=_SELECT,
        commands=PLANNING,
        config="select",
        action_input="select",
        help="changed: plan only the items the change can break; shadow: plan everything and record what would"
        " have been skipped; off (default: config 'select', else off)",
    ),
    Option(
        flags=("--base",),
        metavar="REF",
        group=_SELECT,
        commands=PLANNING,
        help="the commit the change is diffed against (default: the CI's base, else the merge base with the"
        " default branch)",
    ),
    Option(
        flags=("--select-coverage",),
        metavar="FILE",
        group=_SELECT,
        commands=PLANNING,
        config="selection",
        help="coverage.json of a full base-branch run: its test-file map joins the selection (default: config"
        " selection.coverage, else none)",
    ),
    Option(
        flags=("--select-failures",),
        metavar="FILE",
        group=_SELECT,
        commands=PLANNING,
        config="selection",
        help="failures.jsonl (or test ids, one a line) of the last base-branch run: those always run (default:"
        " config selection.failures, else none)",
    ),
)

# the options of one shard's run, shared by `run` and `local` (each shard of `local` is a `run`)
RUN_OPTIONS: Final = (
    Option(
        flags=("--junit",),
        metavar="PATH|GLOB",
        default=None,
        commands=RUNNING,
        action_input="junit",
        help="where the command writes its JUnit report (default: none; or put {junit} in the command)",
    ),
    Option(
        flags=("--timeout",),
        metavar="DURATION",
        type=parse_timeout,
        default=None,
        commands=RUNNING,
        action_input="timeout",
        help="wall-clock limit above 0 for the whole shard, e.g. 30m (default: none)",
    ),
    Option(
        flags=("--grace",),
        metavar="DURATION",
        type=parse_duration,
        default=10.0,
        commands=RUNNING,
        help="wait after the graceful signal before SIGKILL; 0 kills at once (default: 10s)",
    ),
    Option(
        flags=("--signal",),
        metavar="SIGNAL",
        dest="graceful_signal",
        type=parse_signal,
        default=int(signal.SIGINT),
        commands=RUNNING,
        help="graceful signal at the deadline; pytest writes its report on SIGINT, not SIGTERM (default: SIGINT)",
    ),
    Option(
        flags=("--retries",),
        metavar="K",
        type=int,
        default=0,
        commands=RUNNING,
        action_input="retries",
        help="re-run only the failed tests up to K times (default: 0)",
    ),
    Option(
        flags=("--max-rerun-failures",),
        metavar="M",
        type=int,
        default=10,
        commands=RUNNING,
        help="skip re-runs above this many failures (default: 10)",
    ),
    Option(
        flags=("--flaky-result",),
        choices=tuple(r.value for r in FlakyResult),
        default=FlakyResult.PASS.value,
        commands=RUNNING | {"aggregate", "comment"},
        help="whether a flaky test (failed, then passed on a re-run; always reported) fails the run (default: pass)",
    ),
    Option(
        flags=("--max-test-seconds",),
        metavar="S",
        type=parse_seconds,
        default=None,
        commands=RUNNING,
        help="a passing test slower than S seconds (above 0) fails with the reason (default: no budget)",
    ),
    Option(
        flags=("--accept-exit-code",),
        action="store_true",
        commands=RUNNING,
        help="without a test report, trust the exit code (the outcome says accounting was impossible) (default: off)",
    ),
    Option(
        flags=("--leak-timeout",),
        metavar="DURATION",
        type=parse_duration,
        default=0.5,
        commands=RUNNING,
        help="how long processes may outlive the command before they are reported and killed (default: 500ms)",
    ),
    Option(
        flags=("--coverage",),
        dest="coverage",
        action="store_true",
        default=None,
        exclusive="coverage",
        commands=RUNNING,
        config="coverage",
        action_input="coverage",
        help="measure coverage into the shard folder's coverage/ (coverage.py for pytest and `python -m`, "
        "V8 for node); needs ci-shards[coverage] for Python (default: the config key `coverage`, else off)",
    ),
    Option(
        flags=("--no-coverage",),
        dest="coverage",
        action="store_false",
        exclusive="coverage",
        commands=RUNNING,
        config="coverage",
        help="no coverage (default: off)",
    ),
    Option(
        flags=("--coverage-map",),
        action=argparse.BooleanOptionalAction,
        default=True,
        commands=RUNNING,
        help="with --coverage under pytest: record which test files executed each line (default: on)",
    ),
    Option(
        flags=("command",),
        nargs=argparse.REMAINDER,
        commands=RUNNING,
        action_input="test-command",
        help="after --: the test command; {items}, {items_file} and {junit} are expanded (default: none)",
    ),
)

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
    Option(flags=("--plan",), type=Path, required=True, commands=_AGGREGATE, help="plan.json of this run (required)"),
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
        commands=_AGGREGATE,
        help="write every failure record as JSON lines (default: not written)",
    ),
    Option(
        flags=("--summary",),
        type=Path,
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
    Option(flags=("--comment-key",), commands=_AGGREGATE, help=_COMMENT_KEY_HELP),  # its input is comment's
    Option(
        flags=("--comment-out",),
        type=Path,
        commands=_AGGREGATE,
        help="also write the comment body to FILE (default: none)",
    ),
    Option(flags=("--plan",), type=Path, commands=_COMMENT, help="plan.json (with DIR...) (default: none)"),
    Option(flags=("dirs",), nargs="*", type=Path, metavar="DIR", commands=_COMMENT, help=_SHARD_DIRS_HELP),
    Option(
        flags=("--body-file",),
        type=Path,
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

# every declared option, in the order each subcommand's --help lists its own
OPTIONS: Final = (
    *PLAN_OPTIONS,
    *AGGREGATE_HEAD,
    Option(
        flags=("--format",),
        choices=("table", "json", "markdown"),
        default="table",
        commands=frozenset({"plan"}),
        help="stdout format; json is plan.json exactly (default: table)",
    ),
    Option(
        flags=("-o", "--output"),
        metavar="FILE",
        commands=frozenset({"plan"}),
        help="write plan.json to FILE, - for stdout (default: not written)",
    ),
    Option(
        flags=("--plan",),
        metavar="FILE",
        commands=frozenset({"matrix"}),
        help="use this plan.json instead of planning (default: plan now)",
    ),
    Option(
        flags=("--plan-out",),
        default="plan.json",
        metavar="PATH",
        commands=frozenset({"matrix"}),
        help="where plan.json is written (default: plan.json)",
    ),
    Option(
        flags=("--plan",),
        type=Path,
        default=Path("plan.json"),
        commands=frozenset({"run"}),
        help="the plan file (default: plan.json)",
    ),
    Option(
        flags=("--shard",),
        required=True,
        commands=frozenset({"run"}),
        action_input="shard",
        help="I/N (1-based) or auto from the CI's variables (required)",
    ),
    Option(
        flags=("--live",),
        dest="live",
        action="store_true",
        default=None,
        exclusive="live",
        commands=frozenset({"run"}),
        help="stream output to the console, each batch and re-run in a ::group:: on GitHub "
        "(default: on when stderr is a terminal or CI/GITHUB_ACTIONS is set)",
    ),
    Option(
        flags=("--no-live",),
        dest="live",
        action="store_false",
        exclusive="live",
        commands=frozenset({"run"}),
        help="only spool output to output.log (default: off)",
    ),
    Option(
        flags=("--allow-empty",),
        action="store_true",
        commands=frozenset({"run"}),
        config="allow-empty",
        action_input="allow-empty",
        help="a plan with no items passes; without it its shards are written as empty and run exits 1"
        " (default: config 'allow-empty', else off)",
    ),
    Option(
        flags=("--allow-empty",),
        action="store_true",
        commands=PLANNING,
        config="allow-empty",
        action_input="allow-empty",
        help=ALLOW_EMPTY_HELP,
    ),
    Option(
        flags=("--jobs",),
        metavar="N|auto",
        default="auto",
        commands=frozenset({"local"}),
        help="shards at once: N or auto = min(cores, memory/--job-memory, shards) (default: auto)",
    ),
    Option(
        flags=("--job-memory",),
        metavar="SIZE",
        type=parse_size,
        default=DEFAULT_JOB_MEMORY,
        commands=frozenset({"local"}),
        help="memory budget per job for --jobs auto (default: 1G)",
    ),
    Option(
        flags=("--out",),
        type=Path,
        default=Path(RESULTS_DIR),
        commands=RUNNING,
        help=f"results folder (default: {RESULTS_DIR})",
    ),
    Option(
        flags=("--pytest",),
        action="store_true",
        commands=frozenset({"run"}),
        action_input="pytest",
        help="run `python -m pytest` on the shard's own files with the bundled plugin selecting its node ids; "
        "arguments after -- are extra pytest options (paths, node ids and --pyargs targets among them are dropped"
        " and named; the plan's unowned_shard collects the paths, to run test files no shard owns) (default: off)",
    ),
    *RUN_OPTIONS,
    *AGGREGATE_OPTIONS,
    *AGGREGATE_TAIL,
    Option(
        flags=("pytest_args",),
        nargs="*",
        metavar="-- PYTEST_ARGS",
        commands=frozenset({"plan", "matrix"}),
        action_input="pytest-args",
        help=PYTEST_ARGS_HELP,
    ),
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
    *(
        Option(flags=(flag,), type=Path, metavar="FILE", group=_REPORTS, commands=frozenset({"local"}), help=help_)
        for flag, help_ in (
            ("--merged-junit", "write the merged JUnit XML to FILE (default: not written)"),
            ("--summary", "write the Markdown summary to FILE (default: not written)"),
            ("--failures", "write every failure record to FILE as JSON lines (default: not written)"),
            ("--timings-out", "fold measured durations into the timings file FILE (default: not written)"),
        )
    ),
)

_SEE_SELECTION = "docs/selection.md"

# the keys of ci-shards.yml / [tool.ci-shards], in the order docs/configuration.md lists them
CONFIG_KEYS: Final = (
    ConfigKey(
        name="timings",
        kind=ConfigKind.STRING,
        default="none",
        meaning="timings file: pytest-split `.test_durations`, JUnit XML or a ci-shards store (docs/timings-store.md)",
    ),
    ConfigKey(name="variant", kind=ConfigKind.STRING, default="none", meaning="variant key in the store"),
    ConfigKey(
        name="granularity",
        kind=ConfigKind.CHOICE,
        default="`auto`",
        meaning="`test`: items may go anywhere; `file`: files never split; `auto`: files whole unless balance needs"
        " a cut",
    ),
    ConfigKey(
        name="keep-together",
        kind=ConfigKind.CUSTOM,
        default="none",
        meaning="`class`, or glob patterns (matched against the item id and its file)",
    ),
    ConfigKey(
        name="weights",
        kind=ConfigKind.CUSTOM,
        default="none",
        meaning="pattern → factor (above 0, at most 1e6) applied to estimates",
    ),
    ConfigKey(
        name="shards",
        kind=ConfigKind.CUSTOM,
        default="required, or `auto` when `target-seconds` is set",
        meaning="number of shards",
    ),
    ConfigKey(
        name="target-seconds",
        kind=ConfigKind.NUMBER,
        default="none",
        meaning="`shards: auto` picks the smallest N whose slowest shard + overhead fits (else the fewest within"
        " 2 % of the best)",
    ),
    ConfigKey(
        name="shard-overhead",
        kind=ConfigKind.NUMBER,
        default="learned by aggregate (timings store), else 0",
        meaning="seconds of per-shard setup",
    ),
    ConfigKey(
        name="max-shards",
        kind=ConfigKind.COUNT,
        default=str(DEFAULT_MAX_SHARDS),
        meaning="upper limit for `shards: auto`",
    ),
    ConfigKey(
        name="max-items-per-shard", kind=ConfigKind.COUNT, default="none", meaning="at most this many items per shard"
    ),
    ConfigKey(
        name="cut-cost",
        kind=ConfigKind.NUMBER,
        default="0",
        meaning="seconds charged for each extra shard a file is cut into (its module/class setup runs again there)",
    ),
    ConfigKey(name="strategy", kind=ConfigKind.STRING, default="`balanced`", meaning="packing strategy"),
    ConfigKey(
        name="allow-empty",
        kind=ConfigKind.BOOL,
        default="`false`",
        meaning="let a plan with no items, or a run in which no test ran, pass (`plan`, `matrix`, `run`, `local`,"
        " `aggregate` read it; docs/rules.md)",
    ),
    ConfigKey(
        name="fail-on",
        kind=ConfigKind.CHOICE,
        default="`any`",
        meaning='`any`: every failing test fails the build; `new`: only new ones (docs/aggregate.md, "Test history")',
    ),
    ConfigKey(
        name="quarantine",
        kind=ConfigKind.CUSTOM,
        flag_text="none",
        default="none",
        meaning="list of `{test, reason, expires}`: see below",
    ),
    ConfigKey(
        name="coverage",
        kind=ConfigKind.BOOL,
        default="`false`",
        meaning="measure coverage in each shard ([coverage.md](coverage.md)); read by `run` and `local`",
    ),
    ConfigKey(
        name="select",
        kind=ConfigKind.CUSTOM,
        default="`off`",
        meaning="change-based selection: `changed`, `shadow` or `off` (docs/selection.md)",
    ),
    ConfigKey(
        name="touchfiles",
        kind=ConfigKind.CUSTOM,
        flag_text="none",
        default="none",
        meaning="test globs → the source globs they depend on, and `global` globs that run everything"
        f" ({_SEE_SELECTION})",
    ),
    ConfigKey(
        name="selection",
        kind=ConfigKind.CUSTOM,
        default=f"see {_SEE_SELECTION}",
        meaning="`always`, `ignore`, `run-all-label`, `default-branch`, `on-default-branch`, `in-merge-queue`,"
        " `coverage`, `failures`",
    ),
)

# a CHOICE key accepts what its flag accepts
CONFIG_CHOICES: Final = {o.config: o.choices for o in OPTIONS if o.config is not None and o.choices is not None}

# action.yml inputs that are no option of the CLI: each with what it is for instead
ACTION_ONLY_INPUTS: Final = {
    "command": "which step of the action runs (ci-shards gha plan|run|aggregate|comment)",
    "fail-on-verdict": "whether the action's last step exits with aggregate's status (gha.inputs.step_exit)",
    "github-token": "the token the comment step and the artifact actions use",
    "run-id": "the workflow run whose artifacts the comment step downloads",
    "save-timings": "when the cache step saves the timings store",
    "working-directory": "where every step runs",
    "artifact-prefix": "the names of the uploaded artifacts (gha.inputs.shard_artifact_name)",
    "retention-days": "how long the uploaded artifacts are kept",
    "python": "the interpreter the action installs ci-shards with",
    "python-version": "the Python setup-python installs when no python is given",
}
