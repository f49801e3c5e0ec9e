"""What the planner packs: atoms (a test, or items a keep-together rule joins) and units (the
atoms of one file, or of files a rule joins), with integer costs. Pure."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Final

from ci_shards.model.matching import item_file
from ci_shards.plan.packing import Atom, Piece

MICRO: Final = 1_000_000  # costs are integer microseconds: sums do not depend on their order
MIN_COST: Final = 1_000  # 1 ms: no item is free (plan.json's resolution), so counts still matter
CLASS_RULE: Final = "class"


def _class_key(item: str) -> str | None:
    parts = item.split("::")
    return "::".join(parts[:2]) if len(parts) >= 3 else None


def build_atoms(items: Sequence[str], keep_together: Sequence[str], seconds: Mapping[str, float]) -> list[Atom]:
    """Items joined by keep-together rules (``class``, or glob patterns: all matches of one pattern
    stay together), as atoms sorted by key (``items`` must be sorted and unique)."""
    if not keep_together:  # the common case, and the one that must be fast for 100,000 items: _micro inlined
        return [Atom(item, (item,), max(MIN_COST, round(seconds[item] * MICRO))) for item in items]
    parent = {item: item for item in items}

    def find(item: str) -> str:
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for rule in keep_together:
        first: dict[str, str] = {}
        for item in items:
            key = (
                _class_key(item)
                if rule == CLASS_RULE
                else (rule if fnmatch.fnmatchcase(item, rule) or fnmatch.fnmatchcase(item_file(item), rule) else None)
            )
            if key is not None:
                union(first.setdefault(key, item), item)
    groups: dict[str, list[str]] = {}
    for item in items:
        groups.setdefault(find(item), []).append(item)
    atoms = [
        Atom(key=members[0], items=tuple(members), cost=sum(_micro(seconds[m]) for m in members))
        for members in groups.values()
    ]
    return sorted(atoms, key=lambda a: a.key)


def literal_rule(file: str) -> str:
    """A keep-together rule (an fnmatch pattern) that matches exactly ``file``."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in file)


def unmatched_rules(items: Sequence[str], keep_together: Sequence[str]) -> list[str]:
    """Glob rules that match no item (or its file): most likely a typo, said in the plan's notes."""
    return [
        rule
        for rule in keep_together
        if rule != CLASS_RULE
        and not any(fnmatch.fnmatchcase(i, rule) or fnmatch.fnmatchcase(item_file(i), rule) for i in items)
    ]


def _micro(seconds: float) -> int:
    return max(MIN_COST, round(seconds * MICRO))


def build_units(atoms: Sequence[Atom]) -> list[Piece]:
    """Whole units: the atoms of one file, with files joined when a keep-together group spans them."""
    parent: dict[str, str] = {}

    def find(name: str) -> str:
        parent.setdefault(name, name)
        while parent[name] != name:
            name = parent[name]
        return name

    for atom in atoms:
        if len(atom.items) == 1:
            continue
        files = sorted({item_file(i) for i in atom.items})
        for other in files[1:]:
            ra, rb = find(files[0]), find(other)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    grouped: dict[str, list[Atom]] = {}
    for atom in atoms:
        file = atom.key.split("::", 1)[0]  # item_file, inlined: this loop sees every atom
        grouped.setdefault(find(file) if parent else file, []).append(atom)
    units = []
    for n, name in enumerate(sorted(grouped)):
        group = grouped[name]
        if len(group) == 1:  # one test in the file: the common case of huge flat suites
            units.append(Piece(n, (group[0],), group[0].cost, len(group[0].items)))
        else:
            units.append(Piece(n, tuple(group), sum(a.cost for a in group), sum(len(a.items) for a in group)))
    return units
