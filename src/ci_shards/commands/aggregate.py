"""The aggregate stage's subcommands (``aggregate``, ``junit merge``, ``junit summary``, ``comment``): the flags
become the stage's options, one front door runs (``report.front``, ``junit.front``), and what it returns is
printed here. ``aggregate`` and ``comment`` take options declared in ``ci_shards.options.declared``; the
arguments of ``junit merge|summary`` are below.

The front doors are imported inside the handlers: with the report package and jinja2 they would cost every
other subcommand's start-up ~50-90 ms (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ci_shards.common.errors import EXIT_OK, EXIT_USAGE, CiShardsError
from ci_shards.options.config import load_config
from ci_shards.options.typed import aggregate_options
from ci_shards.options.values import CommentMode


def aggregate_handler(args: argparse.Namespace) -> int:
    from ci_shards.report.front import aggregate  # noqa: PLC0415 (start-up, above)

    options = aggregate_options(vars(args), load_config(Path.cwd()))
    result = aggregate(options, env=os.environ)
    if options.output_format == "json":
        sys.stdout.write(json.dumps(result.to_json(), sort_keys=True, indent=2) + "\n")
    if result.exit_code == EXIT_USAGE and result.problems:
        # said as it happened, and again as the last line: exit 2 is about this, not the verdict printed since
        more = f" (and {len(result.problems) - 1} more above)" if len(result.problems) > 1 else ""
        raise CiShardsError(result.problems[0] + more)
    return result.exit_code


def comment_handler(args: argparse.Namespace) -> int:
    from ci_shards.report.aggregate import FlakyResult  # noqa: PLC0415 (start-up, above)
    from ci_shards.report.front import run_comment  # noqa: PLC0415

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


def junit_merge_handler(args: argparse.Namespace) -> int:
    from ci_shards.junit.front import junit_merge  # noqa: PLC0415 (start-up, above)

    return junit_merge(patterns=args.patterns, out=args.output, name=args.name, env=os.environ)


def junit_summary_handler(args: argparse.Namespace) -> int:
    from ci_shards.junit.front import junit_summary  # noqa: PLC0415 (start-up, above)
    from ci_shards.report.outputs import JUNIT_SUMMARY_SCHEMA  # noqa: PLC0415

    files, totals = junit_summary(patterns=args.patterns, env=os.environ)
    counts = totals.to_json()
    if args.format == "json":
        payload = {"schema": JUNIT_SUMMARY_SCHEMA, "files": files, **counts}
        sys.stdout.write(json.dumps(payload, sort_keys=True, indent=2) + "\n")
    else:
        sys.stdout.write(f"files: {files}\n" + "".join(f"{k}: {v}\n" for k, v in counts.items()))
    return EXIT_OK


def junit_merge_arguments(merge: argparse.ArgumentParser) -> None:
    merge.add_argument("patterns", nargs="+", metavar="FILE|GLOB", help="JUnit files or glob patterns")
    merge.add_argument(
        "-o", "--output", type=Path, required=True, help="the merged file to write, - for stdout (required)"
    )
    merge.add_argument("--name", default="ci-shards", help="name of the <testsuites> root (default: ci-shards)")


def junit_summary_arguments(summary: argparse.ArgumentParser) -> None:
    summary.add_argument("patterns", nargs="+", metavar="FILE|GLOB", help="JUnit files or glob patterns")
    summary.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")
