"""The options of one shard's run (``run``, and ``local``, each of whose shards is a ``run``) and of ``local``."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from typing import Final

from ci_shards.judge import FlakyResult
from ci_shards.model.outcome import RESULTS_DIR
from ci_shards.options.spec import Option
from ci_shards.options.values import parse_duration, parse_seconds, parse_signal, parse_size, parse_timeout

DEFAULT_JOB_MEMORY: Final = 1 << 30
RUNNING: Final = frozenset({"run", "local"})  # the subcommands that run shards

_REPORTS = "reports (as aggregate writes them)"

# run's own, before the shared ones
RUN_HEAD: Final = (
    Option(
        flags=("--plan",),
        type=Path,
        metavar="FILE",
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
)

# how many shards local runs at once
LOCAL_HEAD: Final = (
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
)

# the results folder, and run's --pytest (local's is the plan's, which also runs)
RUN_OUT: Final = (
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
        help="run `python -m pytest` with the arguments after -- (the same paths, --pyargs modules and options"
        " the plan was made with) and the bundled plugin selecting the shard's node ids inside pytest; other"
        " shards' files are never collected, and the plan's unowned_shard runs test files no shard owns"
        " (default: off)",
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
        flags=("--coverage-map-per",),
        choices=("test", "file"),
        default="test",
        commands=RUNNING,
        help="the map's context: each test (a change selects the tests that ran it) or each test file (the whole "
        "file; less run CPU on suites of many small tests: docs/coverage.md) (default: test)",
    ),
    Option(
        flags=("command",),
        nargs=argparse.REMAINDER,
        commands=RUNNING,
        action_input="test-command",
        help="after --: the test command; {items}, {items_file} and {junit} are expanded (default: none)",
    ),
)

# what local writes as aggregate would
LOCAL_REPORTS: Final = (
    *(
        Option(flags=(flag,), type=Path, metavar="FILE", group=_REPORTS, commands=frozenset({"local"}), help=help_)
        for flag, help_ in (
            ("--junit-out", "write the merged JUnit XML to FILE, as aggregate --junit-out (default: not written)"),
            ("--summary", "write the Markdown summary to FILE (default: not written)"),
            ("--failures", "write every failure record to FILE as JSON lines (default: not written)"),
            ("--timings-out", "fold measured durations into the timings file FILE (default: not written)"),
        )
    ),
    # --junit-out was called --merged-junit in local only: aggregate's name is the one
    Option(
        flags=("--merged-junit",),
        dest="junit_out",
        type=Path,
        commands=frozenset({"local"}),
        deprecated_for="--junit-out",
        help="",
    ),
)
