"""``junit merge`` and ``junit summary``: any producer's JUnit files read (unreadable ones named, the rest kept),
merged into one file, or counted as pytest counts them."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ci_shards.common import outfile
from ci_shards.common.console import Console, console_for, plural
from ci_shards.common.errors import EXIT_OK, InputError
from ci_shards.junit import JUnitError, expand_patterns, read_many, write_junit_suites
from ci_shards.model.outcome import Totals


def _read_all(patterns: Sequence[str], console: Console) -> tuple[list[tuple[str, list[Any]]], list[JUnitError]]:
    suites, errors = read_many(expand_patterns(patterns))
    for err in errors[1:]:
        console.error(str(err))
    return suites, errors


def junit_merge(*, patterns: Sequence[str], out: Path, name: str, env: Mapping[str, str]) -> int:
    console = console_for(env)
    suites, errors = read_many(expand_patterns(patterns))
    # partial results are kept even when a file is bad
    if outfile.is_stdout(out):
        _merged_junit_to_stdout(suites, name)  # a closed stdout is cli's quiet BrokenPipeError, not a bad file
    else:
        try:
            write_junit_suites(suites, out, name=name)
        except OSError as err:
            raise InputError(out, f"cannot write: {err.strerror or err}") from None
    totals = Totals.of(c for _name, cases in suites for c in cases)
    said = f"merged {plural(len(suites), 'file')}, {plural(totals.tests, 'test')} into {outfile.describe(out)}"
    if errors:  # the partial merge is written, but the line must not read as success before the error
        console.line(f"ci-shards: {said}; {plural(len(errors), 'unreadable file')} left out:")
        for problem in errors[1:]:
            console.error(str(problem))
        raise errors[0]
    console.line(f"ci-shards: {said}")
    return EXIT_OK


def _merged_junit_to_stdout(suites: Sequence[tuple[str, Sequence[Any]]], name: str) -> None:
    """``junit merge -o -``: the writer streams to a file, so stream it through a temporary one."""
    with tempfile.TemporaryDirectory(prefix="ci-shards-merge-") as tmp:
        merged = Path(tmp) / "merged.xml"
        write_junit_suites(suites, merged, name=name)
        with merged.open(encoding="utf-8") as handle:
            shutil.copyfileobj(handle, sys.stdout)


def junit_summary(*, patterns: Sequence[str], env: Mapping[str, str]) -> tuple[int, Totals]:
    """(files read, their totals); the first unreadable file raises, after every other one is named."""
    console = console_for(env)
    suites, errors = _read_all(patterns, console)
    if errors:
        raise errors[0]
    return len(suites), Totals.of(c for _name, cases in suites for c in cases)
