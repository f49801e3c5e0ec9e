"""The timings store's front door for ``timings import`` and ``timings merge``: a store built from JUnit and
durations files, or several stores merged into one, each file's warnings said on the way. Writing the store
is the caller's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ci_shards.common.console import Console
from ci_shards.common.errors import UsageError
from ci_shards.plan.collect import expand_files
from ci_shards.timings.store import TimingsStore, load_timings, merge_stores


def import_store(
    *, junit: Sequence[str], durations: Sequence[str], variant: str | None, cwd: Path, console: Console
) -> tuple[TimingsStore, int]:
    """(the store, how many files it was built from): each durations file, then each JUnit file, one run each."""
    if not junit and not durations:
        msg = "timings import: give --junit GLOB... and/or --durations FILE"
        raise UsageError(msg)
    store = TimingsStore()
    files = expand_files(junit, cwd=cwd) if junit else []
    for path, is_junit in [*((d, False) for d in durations), *((f, True) for f in files)]:
        loaded = load_timings(cwd / path, junit=is_junit)
        for warning in loaded.warnings:
            console.warning(warning)
        store = store.record(loaded.estimates(), variant=variant)
    return store, len(files) + len(durations)


def merge_files(inputs: Sequence[str], *, cwd: Path, console: Console) -> TimingsStore:
    """The stores of ``inputs`` merged in order (later = more recent)."""
    merged = merge_stores([load_timings(cwd / p) for p in inputs])
    for warning in merged.warnings:
        console.warning(warning)
    return merged
