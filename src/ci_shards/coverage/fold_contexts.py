"""The per-test map's side of the fold (issue 24): every context's lines read straight from the shards'
coverage.py data files, grouped as they are read, and the contexts left out of what coverage.py combines.

The edge (SQLite). coverage.py's ``CoverageData.update`` copies every context's rows into the combined
data, and ``contexts_by_lineno`` hands back one Python set entry per line x context: on packaging's 62,423
tests that was 34 s of CPU and 1.3 GB (docs/benchmarks.md). Here the rows are read per (file, context)
with SQLite doing the per-line work (``group_concat`` of the lines; with line data the ``numbits`` blob
itself), each distinct line set is kept once (``ContextReader.sets``) and a (file, context) pair is two
ints, so the memory follows the distinct sets and the pairs, not tests x lines. What coverage.py combines
for the report has no contexts at all (``copy_without_contexts``: its public ``arcs``/``lines`` with no
context filter are every context's union).

The tables read (``file``, ``context``, ``arc``, ``line_bits``) are coverage.py's documented data file
schema (coverage.readthedocs.io, "Data file schema"; schema version 7, coverage 6 to 7.x).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_shards.coverage.artifact import SHARED_CONTEXT
from ci_shards.coverage.context_map import LineGroups, grouped

# (file path, context, the lines as SQLite's group_concat text): arcs' line ends, as coverage.py's own
# contexts_by_lineno counts them (a negative number is an entry or exit, not a line)
_ARC_LINES = """
select f.path, c.context, group_concat(l.line) from (
    select file_id, context_id, fromno as line from arc where fromno > 0
    union select file_id, context_id, tono from arc where tono > 0
) l join file f on f.id = l.file_id join context c on c.id = l.context_id
group by l.file_id, l.context_id
"""
_LINE_BITS = """
select f.path, c.context, l.numbits from line_bits l join file f on f.id = l.file_id
join context c on c.id = l.context_id
"""


def _not_attributed(context: str) -> bool:
    """Collection, imports and subprocesses (the empty context) and session-wide setup (pytest_map)."""
    return not context or context == SHARED_CONTEXT


@dataclass
class ContextReader:
    """Every (file, context) pair's lines, each distinct line set interned once."""

    names: dict[str, int] = field(default_factory=dict)  # context → its number here
    sets: dict[tuple[int, ...], int] = field(default_factory=dict)  # line set → its number
    set_lines: list[tuple[int, ...]] = field(default_factory=list)
    files: dict[str, dict[int, int]] = field(default_factory=dict)  # mapped path → context → line set
    _texts: dict[Any, int] = field(default_factory=dict)  # group_concat text / numbits blob → line set

    def _intern(self, lines: tuple[int, ...]) -> int:
        found = self.sets.get(lines)
        if found is None:
            found = self.sets[lines] = len(self.set_lines)
            self.set_lines.append(lines)
        return found

    def _union(self, first: int, second: int) -> int:
        """The line set holding both sets' lines."""
        return self._intern(tuple(sorted({*self.set_lines[first], *self.set_lines[second]})))

    def _add(self, path: str, context: str, key: Any, decode: Callable[[Any], list[int]]) -> None:
        line_set = self._texts.get(key)
        if line_set is None:
            line_set = self._texts[key] = self._intern(tuple(sorted(set(decode(key)))))
        number = self.names.setdefault(context, len(self.names))
        per_file = self.files.setdefault(path, {})
        known = per_file.get(number)
        if known is not None and known != line_set:  # the same context in two data files (processes)
            line_set = self._union(known, line_set)
        per_file[number] = line_set

    def read(self, data_file: Path, mapped: Callable[[str], str]) -> None:
        """One data file's rows (read-only; ``sqlite3.Error`` for a damaged one)."""
        from coverage.numbits import numbits_to_nums  # noqa: PLC0415

        with contextlib.closing(sqlite3.connect(f"{data_file.resolve().as_uri()}?mode=ro", uri=True)) as db:
            for path, context, text in db.execute(_ARC_LINES):
                self._add(mapped(path), context, str(text), lambda t: [int(n) for n in t.split(",")])
            for path, context, blob in db.execute(_LINE_BITS):
                self._add(mapped(path), context, bytes(blob), numbits_to_nums)

    def add(self, path: str, context: str, lines: Sequence[int]) -> None:
        """One (file, context) pair's lines (as a data file's row gives them)."""
        self._add(path, context, ("lines", tuple(sorted(set(lines)))), lambda key: list(key[1]))

    def merge(self, other: ContextReader) -> None:
        """``other``'s pairs added to these (one shard's, read whole before it counts)."""
        name_of = {number: name for name, number in other.names.items()}
        for path, contexts in other.files.items():
            for number, line_set in contexts.items():
                self.add(path, name_of[number], other.set_lines[line_set])

    def table(self, ran: Iterable[str] = ()) -> tuple[str, ...]:
        """The artifact's context table: every context a test or test file owns, and the tests that ran
        (``tests_ran``, numbered in it), sorted."""
        return tuple(sorted({*(n for n in self.names if not _not_attributed(n)), *ran}))

    def file_map(self, paths: Sequence[str], table: Sequence[str]) -> FileMap:
        """What the map says of one source file (measured under each of ``paths``), against ``table``."""
        position = {name: i for i, name in enumerate(table)}
        name_of = {number: name for name, number in self.names.items()}
        contexts: dict[int, int] = {}
        for path in paths:
            for number, found in self.files.get(path, {}).items():
                known = contexts.get(number)
                if known is not None and known != found:  # one file measured under two names
                    found = self._union(known, found)  # noqa: PLW2901
                contexts[number] = found
        unattributed: set[int] = set()
        by_set: dict[int, list[int]] = {}
        test_files: dict[str, set[int]] = {}
        for number, line_set in contexts.items():
            name = name_of[number]
            if _not_attributed(name):
                unattributed.update(self.set_lines[line_set])
                continue
            by_set.setdefault(line_set, []).append(position[name])
            test_files.setdefault(name.split("::", 1)[0], set()).add(line_set)
        return FileMap(
            unattributed=frozenset(unattributed),
            test_files={t: frozenset(n for s in sets for n in self.set_lines[s]) for t, sets in test_files.items()},
            groups=grouped({self.set_lines[s]: cs for s, cs in by_set.items()}, table),
        )


@dataclass(frozen=True)
class FileMap:
    unattributed: frozenset[int]  # lines run in no test's context
    test_files: Mapping[str, frozenset[int]]  # a test file (its tests' and its own contexts) → lines
    groups: LineGroups


def copy_without_contexts(source: Any, target: Any, mapped: Callable[[str], str]) -> None:
    """``source``'s data (a read ``CoverageData``) into ``target`` with its contexts merged into one: what
    ``target.update(source, map_path=mapped)`` records for the report, without a row per context."""
    from coverage.exceptions import DataError  # noqa: PLC0415

    arcs = source.has_arcs()
    empty: list[str] = []
    for name in sorted(source.measured_files()):
        found = source.arcs(name) if arcs else source.lines(name)
        if found:
            target.add_arcs({mapped(name): found}) if arcs else target.add_lines({mapped(name): found})
        else:
            empty.append(name)
        tracer = source.file_tracer(name)
        if tracer:
            target.add_file_tracers({mapped(name): tracer})
    for name in empty:  # a file measured with no line (an empty module); none at all in an empty data file
        with contextlib.suppress(DataError):
            target.touch_files([mapped(name)], source.file_tracer(name) or None)
