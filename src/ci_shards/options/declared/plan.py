"""The options that decide a plan (``plan``, ``matrix`` and ``local``) and the outputs of ``plan`` and ``matrix``."""

from __future__ import annotations

from typing import Final

from ci_shards.model.plan import Granularity
from ci_shards.options.spec import Option
from ci_shards.plan.matrix import GITHUB_MATRIX_MAX
from ci_shards.plan.packing import STRATEGIES
from ci_shards.select.settings import SelectMode

DEFAULT_MAX_SHARDS: Final = GITHUB_MATRIX_MAX
PLANNING: Final = frozenset({"plan", "matrix", "local"})  # the subcommands that make a plan

_ITEMS = "items (at least one source)"
_SELECT = "change-based selection (docs/selection.md)"

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
        help="collect node ids with pytest --collect-only, run by --python with ci-shards' plugin recording"
        " pytest's own ids; pytest arguments follow -- (default: off)",
    ),
    Option(
        flags=("--python",),
        metavar="PATH",
        commands=PLANNING | {"run"},
        config="python",
        action_input="python",
        help="the interpreter whose pytest --pytest runs (collection and shards); it needs pytest (default: config"
        " 'python', else the active virtualenv's ($VIRTUAL_ENV) when ci-shards runs from another, else ci-shards' own)",
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
        help="the test files pytest's own settings (testpaths, python_files) find on disk, merged with the timings"
        " (a file without timings is estimated from the tests it defines, read as text): no test dependencies"
        " needed; path arguments after -- narrow it (default: off)",
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
        help="setup seconds every shard pays (default: config, else learned by aggregate, else 0)",
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

# what plan and matrix write, and matrix's --plan
PLAN_OUTPUTS: Final = (
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
)

# plan, matrix and local: an empty plan passes
PLAN_ALLOW_EMPTY: Final = (
    Option(
        flags=("--allow-empty",),
        action="store_true",
        commands=PLANNING,
        config="allow-empty",
        action_input="allow-empty",
        help=ALLOW_EMPTY_HELP,
    ),
)

# the words after -- of plan and matrix
PYTEST_ARGS: Final = (
    Option(
        flags=("pytest_args",),
        nargs="*",
        metavar="-- PYTEST_ARGS",
        commands=frozenset({"plan", "matrix"}),
        action_input="pytest-args",
        help=PYTEST_ARGS_HELP,
    ),
)
