"""The per-test map's compact form (issue 24): one table of contexts, and per file groups of lines. Pure.

What a selection asks of the map is "which contexts executed any line of this function body on the
base" (select/maps.py ``CoverageMap.narrow``). Written per context (``tests``: node id → lines) the
answer costs every test x every line it ran: 69 MB of coverage.json for packaging's 62,423 tests, most of
them parametrized cases that run the very same lines. So the map keeps each file's *distinct* line sets
once, each with the contexts that executed exactly that set:

- coverage.json's top-level ``contexts``: every context's name (a test's node id, or a test file for its
  module- and class-wide setup) and every test the base run ran, sorted, numbered by position, each
  front-coded (``"N:rest"``: the first N characters are the name before's);
- per file ``context_lines``: ``[[LINES, CONTEXTS], ...]``, both as ranges text (``"3-7,9"``: sorted,
  disjoint, inclusive), ``CONTEXTS`` numbering the table.

Nothing is lost: ``expand`` gives back every context's lines (the round trip is a property test), and
the size follows the distinct line sets and the runs of contexts, not tests x lines. ``LineGroups.ran``
answers the selection's question without expanding.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_RANGES = re.compile(r"^(?:\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)?$")
LINE_LIMIT = 10**9  # far beyond any file's lines: a bigger one is a damaged file, not data
_EXPANDED_LIMIT = 10**7  # numbers one text may stand for (a damaged "1-999999999" must not fill the memory)


def ranges_text(numbers: Iterable[int]) -> str:
    """Sorted distinct non-negative numbers as ``"1-3,7"`` (``""`` for none)."""
    parts: list[str] = []
    ordered = sorted(set(numbers))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def parse_ranges(text: object, limit: int = LINE_LIMIT) -> tuple[int, ...]:
    """``ranges_text``'s numbers (each below ``limit``) back, ascending; ``ValueError`` naming the problem for
    anything else (unsorted, overlapping, reversed or too large ranges are damage, not another spelling)."""
    if not isinstance(text, str) or not _RANGES.match(text):
        msg = f"not a ranges text: {str(text)[:40]!r}"
        raise ValueError(msg)
    found: list[int] = []
    for part in text.split(",") if text else ():
        first, _, last = part.partition("-")
        low, high = int(first), int(last or first)
        if high < low or high >= limit or (found and low <= found[-1]) or len(found) + high - low >= _EXPANDED_LIMIT:
            msg = f"ranges out of order or too large: {part[:40]!r}"
            raise ValueError(msg)
        found.extend(range(low, high + 1))
    return tuple(found)


@dataclass(frozen=True)
class LineGroup:
    lines: tuple[int, ...]  # ascending
    contexts: tuple[int, ...]  # ascending indices into the context table


@dataclass(frozen=True)
class LineGroups:
    """One file's per-context lines, grouped; ``names`` is the artifact's whole context table."""

    groups: tuple[LineGroup, ...]
    names: Sequence[str]

    def ran(self, lines: Iterable[int]) -> frozenset[str]:
        """The contexts that executed at least one of ``lines``."""
        wanted = set(lines)
        return frozenset(self.names[c] for g in self.groups if wanted.intersection(g.lines) for c in g.contexts)

    def __iter__(self) -> Iterator[str]:
        """Every context with a line in this file."""
        return iter(sorted({self.names[c] for g in self.groups for c in g.contexts}))

    def expand(self) -> dict[str, tuple[int, ...]]:
        """Per context its lines (the per-context form; tests and small maps only: it costs tests x lines)."""
        found: dict[str, set[int]] = {}
        for group in self.groups:
            for c in group.contexts:
                found.setdefault(self.names[c], set()).update(group.lines)
        return {name: tuple(sorted(lines)) for name, lines in sorted(found.items())}


def table(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(names)))


def group(by_context: Mapping[str, Iterable[int]], names: Sequence[str]) -> LineGroups:
    """Per-context lines (every name in ``names``) as groups of equal line sets; contexts without a line are
    left out."""
    index = {name: i for i, name in enumerate(names)}
    sets: dict[tuple[int, ...], list[int]] = {}
    for name, lines in by_context.items():
        key = tuple(sorted(set(lines)))
        if key:
            sets.setdefault(key, []).append(index[name])
    return grouped(sets, names)


def from_tests(raw: Mapping[Any, Iterable[Any]], names: Sequence[str] = ()) -> LineGroups:
    """An artifact written before the table: its file's ``tests`` (context → lines), grouped against ``names``
    (by default its own contexts)."""
    old = {str(t): [int(n) for n in lines] for t, lines in raw.items()}
    return group(old, names or table(old))


def names_at(text: object, names: Sequence[str]) -> tuple[str, ...]:
    """The contexts a ranges text of positions in the table ``names`` numbers (``tests_ran_contexts``)."""
    return tuple(names[i] for i in parse_ranges(text, len(names)))


def grouped(sets: Mapping[tuple[int, ...], Iterable[int]], names: Sequence[str]) -> LineGroups:
    """``LineGroups`` from line set → context indices, in a stable order (by first context)."""
    groups = [LineGroup(lines, tuple(sorted(set(cs)))) for lines, cs in sets.items() if lines]
    return LineGroups(tuple(sorted((g for g in groups if g.contexts), key=lambda g: g.contexts)), names)


def encode(groups: LineGroups) -> list[list[str]]:
    return [[ranges_text(g.lines), ranges_text(g.contexts)] for g in groups.groups]


def decode(raw: Any, names: Sequence[str]) -> LineGroups:
    """A file's ``context_lines`` against the table ``names``; ``ValueError`` naming the problem."""
    if not isinstance(raw, list):
        msg = "context_lines is not a list"
        raise ValueError(msg)
    groups: list[LineGroup] = []
    for entry in raw:
        if not isinstance(entry, list) or len(entry) != 2:
            msg = f"a context_lines entry is not [lines, contexts]: {str(entry)[:40]}"
            raise ValueError(msg)
        lines = parse_ranges(entry[0])
        try:
            contexts = parse_ranges(entry[1], len(names))
        except ValueError as err:
            msg = f"contexts {str(entry[1])[:40]!r} are not in the table of {len(names)} contexts ({err})"
            raise ValueError(msg) from None
        groups.append(LineGroup(lines, contexts))
    return LineGroups(tuple(groups), names)


_SHARED = re.compile(r"^(\d{1,6}):")


def front_coded(names: Sequence[str]) -> list[str]:
    """The sorted table as coverage.json holds it: each name as ``"N:rest"``, ``N`` the characters it shares
    with the name before (node ids of one file and function share most of theirs: ``tests/test_v.py::test_p[``)."""
    coded: list[str] = []
    before = ""
    for name in names:
        shared = 0
        limit = min(len(name), len(before))
        while shared < limit and name[shared] == before[shared]:
            shared += 1
        coded.append(f"{shared}:{name[shared:]}")
        before = name
    return coded


def read_table(raw: Any) -> tuple[str, ...]:
    """coverage.json's ``contexts`` (``front_coded``) as names; ``ValueError`` naming the problem."""
    if not isinstance(raw, list) or not all(isinstance(n, str) for n in raw):
        msg = "'contexts' is not a list of strings"
        raise ValueError(msg)
    names: list[str] = []
    before = ""
    for entry in raw:
        shared = _SHARED.match(entry)
        if shared is None or int(shared.group(1)) > len(before):
            msg = f"'contexts' entry {len(names)} is not N:name with N at most the name before's length"
            raise ValueError(msg)
        before = before[: int(shared.group(1))] + entry[shared.end() :]
        names.append(before)
    if len(set(names)) != len(names):
        msg = "'contexts' names a context twice"
        raise ValueError(msg)
    return tuple(names)
