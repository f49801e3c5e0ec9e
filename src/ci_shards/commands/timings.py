"""``ci-shards timings import`` and ``ci-shards timings merge``: build and combine timings stores,
so users coming from pytest-split or JUnit-based splitting need no script of their own."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ci_shards.common import outfile
from ci_shards.common.console import console_for
from ci_shards.common.errors import UsageError
from ci_shards.plan.collect import expand_files
from ci_shards.timings.store import TimingsStore, load_timings, merge_stores, write_store


def timings_import(args: argparse.Namespace) -> int:
    return import_timings(
        junit=args.junit or [], durations=args.durations or [], variant=args.variant, output=args.output, cwd=Path.cwd()
    )


def import_timings(
    *, junit: Sequence[str], durations: Sequence[str], variant: str | None, output: str, cwd: Path
) -> int:
    if not junit and not durations:
        msg = "timings import: give --junit GLOB... and/or --durations FILE"
        raise UsageError(msg)
    console = console_for(os.environ)
    store = TimingsStore()
    files = expand_files(junit, cwd=cwd) if junit else []
    for path, is_junit in [*((d, False) for d in durations), *((f, True) for f in files)]:
        loaded = load_timings(cwd / path, junit=is_junit)
        for warning in loaded.warnings:
            console.warning(warning)
        store = store.record(loaded.estimates(), variant=variant)
    _emit_store(store, output)
    read = len(files) + len(durations)
    console.line(f"imported {len(store)} items from {read} file(s) into {outfile.describe(output)}")
    return 0


def timings_merge(args: argparse.Namespace) -> int:
    return merge_timings(inputs=args.inputs, output=args.output, cwd=Path.cwd())


def merge_timings(*, inputs: Sequence[str], output: str, cwd: Path) -> int:
    console = console_for(os.environ)
    stores = [load_timings(cwd / p) for p in inputs]
    merged = merge_stores(stores)
    for warning in merged.warnings:
        console.warning(warning)
    _emit_store(merged, output)
    console.line(f"merged {len(inputs)} file(s): {len(merged)} items into {outfile.describe(output)}")
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
