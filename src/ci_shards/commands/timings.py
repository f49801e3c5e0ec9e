"""``ci-shards timings import`` and ``ci-shards timings merge``: build and combine timings stores,
so users coming from pytest-split or JUnit-based splitting need no script of their own. ``timings.front``
builds or merges the store; it is written (or printed with ``-o -``) here."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ci_shards.common import outfile
from ci_shards.common.console import console_for
from ci_shards.timings.front import import_store, merge_files
from ci_shards.timings.store import TimingsStore, write_store


def timings_import(args: argparse.Namespace) -> int:
    console = console_for(os.environ)
    store, read = import_store(
        junit=args.junit or [], durations=args.durations or [], variant=args.variant, cwd=Path.cwd(), console=console
    )
    _emit_store(store, args.output)
    console.line(f"imported {len(store)} items from {read} file(s) into {outfile.describe(args.output)}")
    return 0


def timings_merge(args: argparse.Namespace) -> int:
    console = console_for(os.environ)
    merged = merge_files(args.inputs, cwd=Path.cwd(), console=console)
    _emit_store(merged, args.output)
    console.line(f"merged {len(args.inputs)} file(s): {len(merged)} items into {outfile.describe(args.output)}")
    return 0


def _emit_store(store: TimingsStore, output: str) -> None:
    if outfile.is_stdout(output):
        sys.stdout.write(store.dumps())
    else:
        outfile.make_parent(output)
        write_store(store, output)


def import_arguments(imp: argparse.ArgumentParser) -> None:
    imp.add_argument("--junit", action="extend", nargs="+", metavar="GLOB", help="JUnit XML files (default: none)")
    imp.add_argument(
        "--durations",
        action="append",
        metavar="FILE",
        help="a .test_durations or store file; repeatable (default: none)",
    )
    imp.add_argument("--variant", help="record under this variant key (default: none)")
    imp.add_argument(
        "-o", "--output", required=True, metavar="STORE", help="the store to write, - for stdout (required)"
    )


def merge_arguments(merge: argparse.ArgumentParser) -> None:
    merge.add_argument("inputs", nargs="+", metavar="FILE", help="timings files in any supported format")
    merge.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="the store to write, - for stdout (required)"
    )
