"""The aggregate stage's handlers (``aggregate``, ``junit merge``, ``junit summary``, ``comment``) and the arguments of
``junit merge|summary``; ``aggregate`` and ``comment`` take options declared in ``ci_shards.options.declared``.

The work is in ``commands.aggregate_work``, imported when a handler runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def work(name: str) -> Callable[[argparse.Namespace], int]:
    """A handler that imports the work module only when the subcommand runs: with the report package and
    jinja2 it costs every other subcommand's start-up ~50-90 ms (docs/benchmarks.md)."""

    def handler(args: argparse.Namespace) -> int:
        from ci_shards.commands import aggregate_work  # noqa: PLC0415

        return int(getattr(aggregate_work, name)(args))

    return handler


def junit_merge_arguments(merge: argparse.ArgumentParser) -> None:
    merge.add_argument("patterns", nargs="+", metavar="FILE|GLOB", help="JUnit files or glob patterns")
    merge.add_argument(
        "-o", "--output", type=Path, required=True, help="the merged file to write, - for stdout (required)"
    )
    merge.add_argument("--name", default="ci-shards", help="name of the <testsuites> root (default: ci-shards)")


def junit_summary_arguments(summary: argparse.ArgumentParser) -> None:
    summary.add_argument("patterns", nargs="+", metavar="FILE|GLOB", help="JUnit files or glob patterns")
    summary.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")
