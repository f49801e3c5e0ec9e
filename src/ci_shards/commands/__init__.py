"""Every subcommand of the CLI, in one table: its name, help, the options it takes and its handler.

A handler is a function ``(args: argparse.Namespace) -> int`` in the stage's module here; it turns the Namespace
into the stage's typed options (``ci_shards.options.typed``) and calls the stage. ``declared`` commands take the
options ``ci_shards.options.declared`` gives them; ``arguments`` adds those still declared beside their handler.

The table names each handler by its module and function (``Later``) and imports nothing of the commands: a
``ci-shards`` process imports only the module of the command it runs. Importing them all cost every process
~60-100 ms more (~0.2 s in all), and the suite alone starts ~550 of them (docs/benchmarks.md, "Start-up per
command").
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Handler = Callable[[argparse.Namespace], int]
# a handler that runs other subcommands through the CLI (the action's steps) also takes ``cli.main``: handed in
# by the CLI, since importing it from here or a stage would be an import cycle (cli imports this table)
ReenteringHandler = Callable[[argparse.Namespace, Callable[[Sequence[str]], int]], int]
Arguments = Callable[[argparse.ArgumentParser], None]


@dataclass(frozen=True)
class Later:
    """``function`` of ``ci_shards.commands.<module>``, imported when first called."""

    module: str
    function: str

    def __call__(self, *args: Any) -> Any:
        return getattr(importlib.import_module(f"ci_shards.commands.{self.module}"), self.function)(*args)


# the action's steps (ci_shards.gha.steps.STEPS, a unit test holds them equal), with their help
GHA_STEPS: dict[str, str] = {
    "plan": "plan and write the matrix outputs (the action's plan step)",
    "run": "run one shard and name its artifact (the action's run step)",
    "aggregate": "aggregate, fill the job summary, output verdict and status (the action's aggregate step)",
    "verdict": "exit with aggregate's status unless fail-on-verdict is false (the action's last step)",
    "comment": "post the PR comment from another run's artifacts (the action's comment step)",
}


@dataclass(frozen=True, kw_only=True)
class Command:
    """One subcommand. ``path``: its words (``("junit", "merge")``). A command without a handler is a group: its
    subcommands follow it in the table, and without one it prints its help (exit 2) unless ``required``."""

    path: tuple[str, ...]
    help: str
    description: str | None = None
    handler: Handler | None = None
    reentering: ReenteringHandler | None = None  # instead of ``handler``: also takes cli.main (the gha steps)
    declared: bool = False  # takes the options declared for it in ci_shards.options.declared
    arguments: Arguments | None = None
    metavar: str = "COMMAND"  # a group's: how --help names its subcommand
    required: bool = False  # a group's: its subcommand must be given
    hidden: bool = False  # works, but not listed in its parent's --help (the action's internals)

    @property
    def name(self) -> str:
        return self.path[-1]


COMMANDS: tuple[Command, ...] = (
    Command(
        path=("init",),
        help="write the CI configuration for this repository",
        description="Detect the runner, install command, Python and test paths of the repository in the current "
        "directory and write its sharded CI configuration (docs/init.md).",
        arguments=Later("init", "init_arguments"),
        handler=Later("init", "init_handler"),
    ),
    Command(
        path=("plan",),
        help="balance the items into shards and write plan.json",
        description="Collect the items, estimate them from timings, and balance them into shards.",
        declared=True,
        handler=Later("plan_matrix", "plan_command"),
    ),
    Command(
        path=("matrix",),
        help="print the GitHub matrix for a plan and set the job outputs",
        description='Plan (or read --plan), write plan.json, print {"include": [...]}; with $GITHUB_OUTPUT set,'
        " append the outputs matrix, plan-digest, total and empty.",
        declared=True,
        handler=Later("plan_matrix", "matrix_command"),
    ),
    Command(
        path=("timings",),
        help="import and merge timings files",
        description="Build and combine ci-shards timings stores.",
        metavar="ACTION",
    ),
    Command(
        path=("timings", "import"),
        help="build a store from JUnit XML and/or pytest-split durations",
        description="Each input file counts as one run: one sample per item.",
        arguments=Later("timings", "import_arguments"),
        handler=Later("timings", "timings_import"),
    ),
    Command(
        path=("timings", "merge"),
        help="merge timings files into one store",
        description="Histories are concatenated in argument order (later = more recent), keeping the last 5 samples.",
        arguments=Later("timings", "merge_arguments"),
        handler=Later("timings", "timings_merge"),
    ),
    Command(
        path=("run",),
        help="run one shard of a plan under a hard limit and write its artifact folder",
        description="Run one shard's items: CMD ARGS... {items} after --, or --pytest. Exit 0 when the shard "
        "passed (or is empty), 1 otherwise, 2 on bad usage.",
        declared=True,
        handler=Later("run", "run_handler"),
    ),
    Command(
        path=("local",),
        help="plan, run every shard here as parallel processes, and print the verdict",
        description="Plan the suite, run every shard on this machine (each a real `ci-shards run`), then aggregate. "
        "Ctrl-C stops every shard and still reports what finished; a second Ctrl-C kills them.",
        declared=True,
        handler=Later("run", "local_handler"),
    ),
    Command(
        path=("aggregate",),
        help="merge every shard's results into one verdict, report and exit status",
        description="Read every shard artifact folder under DIR (one per shard, nested per artifact, or the "
        "flat merge-multiple layout), check it against the plan, and write the verdict. Exit 0 only when "
        "every shard passed and every planned item ran exactly once; 1 otherwise; 2 for bad input.",
        declared=True,
        handler=Later("aggregate", "aggregate_handler"),
    ),
    Command(
        path=("junit",),
        help="merge or summarise JUnit XML from any producer",
        description="JUnit XML tools.",
    ),
    Command(
        path=("junit", "merge"),
        help="merge JUnit files into one valid file",
        description="Merge JUnit XML files (paths or globs, ** recursive) into one file: one suite per input, "
        "totals recounted from the test cases. Exit 2 naming any unreadable file (the rest is still merged).",
        arguments=Later("aggregate", "junit_merge_arguments"),
        handler=Later("aggregate", "junit_merge_handler"),
    ),
    Command(
        path=("junit", "summary"),
        help="totals of JUnit files",
        description="Totals (tests, passed, failed, errors, skipped, xfailed, xpassed, flaky, left_out, time) "
        "recounted from the test cases, as pytest counts them. Exit 2 naming any unreadable file.",
        arguments=Later("aggregate", "junit_summary_arguments"),
        handler=Later("aggregate", "junit_summary_handler"),
    ),
    Command(
        path=("comment",),
        help="create or update the PR comment",
        description="Keep one PR comment per workflow and job up to date (found by a hidden marker). Either "
        "from the shard folders (--plan DIR...; re-rendered from the data, the route for fork PRs in a "
        "workflow_run job) or from a body written by `aggregate --comment-out` (--body-file; trusted bodies only, "
        "any state line in it is recomputed). Never fails the build: problems are warnings.",
        declared=True,
        handler=Later("aggregate", "comment_handler"),
    ),
    Command(
        path=("coverage",),
        help="ask the folded coverage about a line, or whether it still describes the code",
        description="Answers from coverage.json (written by `aggregate --coverage-out` or `local --coverage`). "
        "Run from the repository root (or give --root).",
    ),
    Command(
        path=("coverage", "query"),
        help="EXECUTED / NOT EXECUTED / STALE / NO COVERAGE / EXCLUDED for FILE:LINE",
        description="What the coverage says about one line, used only while the file is unchanged since it was "
        "measured. Exit 0 with an answer, 2 for bad input.",
        arguments=Later("coverage", "query_arguments"),
        handler=Later("coverage", "query_handler"),
    ),
    Command(
        path=("coverage", "status"),
        help="FRESH, or STALE: k of n files changed since the coverage was collected",
        description="Compare every file the coverage vouches for with the files here. Exit 0 either way.",
        arguments=Later("coverage", "status_arguments"),
        handler=Later("coverage", "status_handler"),
    ),
    Command(
        path=("gha",),
        help="the GitHub Action's steps (inputs from $CI_SHARDS_INPUTS)",
        description="The steps of action.yml. Each reads the action's inputs as JSON from $CI_SHARDS_INPUTS "
        "(toJSON(inputs)), runs its stage and appends to $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY.",
        metavar="STEP",
        required=True,
        hidden=True,
    ),
    *(
        Command(path=("gha", name), help=text, description=text, reentering=Later("gha", "step"))
        for name, text in GHA_STEPS.items()
    ),
)
