"""Estimating the test files discovery found without timings, from the tests each defines. Pure.

A file without timings is planned whole. Its estimate is the number of tests it defines
(``static_count``, read by the edge and handed in as ``count_of``) times a cost per test: learned
from the files that do have timings (the median of their seconds over their counted tests, so
the counting's own bias, say parametrized fixtures it cannot see, is in the learned cost too),
else ``DEFAULT_UNKNOWN_SECONDS`` per test, what a ``--pytest`` plan gives each collected test it
has no timing for: with no timings at all, both modes estimate a file alike and plan the same
shape. A file that defines no test still costs its import (``EMPTY_FILE_TESTS`` of a test); a
file that cannot be read as Python, or that is not counted (a ``--glob`` file of another runner),
gets the median known file (``fallback_seconds``), as before counting.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ci_shards.common.console import listed, plural
from ci_shards.plan.cut_files import file_parts
from ci_shards.plan.estimates import DEFAULT_UNKNOWN_SECONDS
from ci_shards.plan.static_count import (
    DESELECTED_TESTS,
    EXAMPLE_TESTS,
    GUESSED_CASES,
    HYPOTHESIS_EXAMPLES,
    FileCount,
)

EMPTY_FILE_TESTS: Final = 0.1  # a file with no test: its import, as a tenth of a test
LEARN_FROM_FILES: Final = 100  # timed files counted to learn the cost per test (evenly spread)

# what the edge tells of one file: its count, why it cannot be read (a reason), or None (not counted)
CountOf = Callable[[str], "FileCount | str | None"]


def not_counted(_file: str) -> None:
    """The ``count_of`` of files that are not Python tests (``--glob`` files of another runner)."""
    return None


@dataclass(frozen=True)
class NewFileEstimates:
    seconds: dict[str, float]  # item → seconds: a file, or the parts of one balance may cut (``cut_files``)
    notes: tuple[str, ...]
    tests: dict[str, int]  # the counted items' tests (the learned per-test overhead is added per test)


def learned_cost_per_test(timed: Mapping[str, float], count_of: CountOf) -> tuple[float | None, int]:
    """The median seconds per counted test over (up to ``LEARN_FROM_FILES`` of) the ``timed``
    files (file → total seconds) that define a test, and how many files it came from."""
    files = sorted(f for f, seconds in timed.items() if seconds > 0)
    step = max(1, len(files) // LEARN_FROM_FILES)
    ratios = []
    for file in files[::step][:LEARN_FROM_FILES]:
        count = count_of(file)
        if isinstance(count, FileCount) and count.tests > 0:
            ratios.append(timed[file] / count.units)
    return (statistics.median(ratios), len(ratios)) if ratios else (None, 0)


def estimate_new_files(
    new_files: Sequence[str], count_of: CountOf, *, timed: Mapping[str, float], fallback_seconds: float
) -> NewFileEstimates:
    """Seconds for each of ``new_files`` and the plan's notes on how they were estimated."""
    counts = {f: count_of(f) for f in new_files}
    counted = {f: c for f, c in counts.items() if isinstance(c, FileCount)}
    unreadable = {f: c for f, c in counts.items() if isinstance(c, str)}
    seconds = dict.fromkeys(new_files, fallback_seconds)
    notes: list[str] = []
    if counted:
        per_test, learned_from = learned_cost_per_test(timed, count_of)
        cost = per_test if per_test is not None else DEFAULT_UNKNOWN_SECONDS
        seconds.update({f: cost * max(c.units, EMPTY_FILE_TESTS) for f, c in counted.items()})
        notes.append(_counted_note(counted, cost, learned_from))
    if unreadable:
        shown = [f"{f} ({why})" for f, why in sorted(unreadable.items())]
        notes.append(
            f"{plural(len(unreadable), 'test file')} could not be read as Python, each estimated at"
            f" {_seconds(fallback_seconds)} (the median known file, else the default): {listed(shown)}"
        )
    others = sorted(f for f, c in counts.items() if c is None)
    if others:
        notes.append(
            f"{plural(len(others), 'test file')} without timings planned whole, each estimated at"
            f" {_seconds(fallback_seconds)} (the median known file): {listed(others)}"
        )
    return _cut(seconds, counted, tuple(notes))


def _cut(seconds: Mapping[str, float], counted: Mapping[str, FileCount], notes: tuple[str, ...]) -> NewFileEstimates:
    """The counted files as the items balance may cut them into (``cut_files``), the others whole."""
    items = {f: s for f, s in seconds.items() if f not in counted}
    tests: dict[str, int] = {}
    cut = 0
    for file, count in counted.items():
        parts = file_parts(file, count, seconds[file])
        cut += file not in parts
        items.update({item: part_seconds for item, (part_seconds, _tests) in parts.items()})
        tests.update({item: part_tests for item, (_seconds, part_tests) in parts.items()})
    if cut:
        notes = (
            *notes,
            f"{plural(cut, 'counted file')} offered to balance as the node ids of the tests each defines, to be cut"
            " where the shards need it, or dealt over them in a first plan (a file that stays in one shard is named"
            " whole)",
        )
    return NewFileEstimates(items, notes, tests)


def _counted_note(counted: Mapping[str, FileCount], cost: float, learned_from: int) -> str:
    def total(field: str) -> int:
        return sum(getattr(c, field) for c in counted.values())

    def files(field: str) -> str:
        return plural(sum(1 for c in counted.values() if getattr(c, field)), "file")

    guessed, sized = total("guessed"), total("data_sized")
    empty = sum(1 for c in counted.values() if not c.tests and not c.deselected)
    details = [plural(total("tests"), "test") + " counted"]
    if total("hypothesis"):
        details.append(
            f"{plural(total('hypothesis'), 'hypothesis test')} in {files('hypothesis')} at {EXAMPLE_TESTS:g} test"
            f" per example (max_examples, else {HYPOTHESIS_EXAMPLES})"
        )
    if total("deselected"):
        details.append(
            f"{plural(total('deselected'), 'test')} in {files('deselected')} that -m/-k deselect at"
            f" {DESELECTED_TESTS:g} test each"
        )
    if guessed - sized:
        unsized = sum(1 for c in counted.values() if c.guessed > c.data_sized)
        details.append(
            f"{plural(guessed - sized, 'parametrize argument list')} not literal in {plural(unsized, 'file')}"
            f" counted as {GUESSED_CASES} cases"
        )
    if sized:
        details.append(
            f"{plural(sized, 'argument list')} not literal in {files('data_sized')} sized by the files of the data"
            " folder each names"
        )
    skipped = [c.skipped_at_import for c in counted.values() if c.skipped_at_import]
    if skipped:
        details.append(
            f"{plural(len(skipped), 'file')} of {plural(sum(skipped), 'test')} that a module-level importorskip of a"
            " module this interpreter lacks skips at import"
        )
    if empty:
        details.append(f"{plural(empty, 'file')} with none counted as {EMPTY_FILE_TESTS:g} test")
    source = (
        f"learned: the median over {plural(learned_from, 'timed file')}"
        if learned_from
        else "no file has timings: the default, as --pytest estimates each test it has no timing for"
    )
    return (
        f"{plural(len(counted), 'test file')} without timings estimated from the tests each defines"
        f" ({', '.join(details)}) at {_seconds(cost)} per test ({source}): {listed(sorted(counted))}"
    )


def _seconds(value: float) -> str:
    return f"{value:{'.1f' if value >= 0.1 or not value else '.2g'}} s"
