"""Packing weighted pieces into shards: the interchangeable strategies and the file-cutting fill.

Pure and deterministic. Costs are integers (microseconds), so sums never depend on the order they
were added in; every sort has a strict total order ending in the piece key (the smallest item id),
and ties between shards always go to the lower shard index.

- ``Lpt``: longest processing time first (Graham 1969: ≤ 4/3·OPT), onto the least-loaded shard.
- ``Balanced`` (default): LPT, then moves and pairwise swaps out of the most-loaded shard
  (Finn-Horowitz 0/1-interchange), with a fixed round budget rather than a clock, so the result
  never depends on the machine's speed.
- ``wrap_fill``: McNaughton's wrap-around idea for divisible units: units in LPT order go whole
  onto the least-loaded shard when they fit under a capacity, and are otherwise cut at atom (test)
  boundaries to fill that shard up, the rest continuing on the next one. Each cut fills a shard, so
  at most N-1 cuts are made beyond those that oversized units need.
- ``split_fill``: oversized units first in capacity-sized parts, then best-fit decreasing of whole
  units, and only the units that fit nowhere whole are cut (often fewer cuts than wrapping).
- ``rejoin``: moves cut parts back next to another part of their unit (directly, or swapped
  against a piece of that shard) wherever the shard stays within a limit.
(Graham's LPT, McNaughton's wrap-around rule and the Finn-Horowitz move/swap local search; see docs/planning.md.)
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple, Protocol

from ci_shards.common.errors import UsageError

IMPROVE_ROUNDS: Final = 400  # move/swap rounds; each strictly lowers the pair it touches
SWAP_PARTNERS: Final = 16  # least-loaded shards considered as partners per round
CLOSE_ENOUGH: Final = 10_000  # stop improving within LB/10,000 (0.01 %) of the bound


class Atom(NamedTuple):
    """Items that must run in one shard (one test, or a keep-together group).

    Atoms and pieces are named tuples rather than frozen dataclasses: a big suite makes 100,000 of
    them and tuples are several times cheaper to create."""

    key: str  # the smallest item id: the total-order tie-break
    items: tuple[str, ...]
    cost: int  # microseconds


class Piece(NamedTuple):
    """A whole unit (a file, or files joined by a keep-together rule) or a cut part of one."""

    unit: int  # index of the unit it belongs to
    atoms: tuple[Atom, ...]
    cost: int  # atoms' cost plus the repeated setup of a cut-off part
    size: int  # items

    @property
    def key(self) -> str:
        return self.atoms[0].key

    @property
    def sort_key(self) -> tuple[int, str]:
        return (-self.cost, self.key)


def make_piece(unit: int, atoms: Sequence[Atom], extra: int = 0) -> Piece:
    return Piece(unit, tuple(atoms), sum(a.cost for a in atoms) + extra, sum(len(a.items) for a in atoms))


Bins = list[list[Piece]]


@dataclass(frozen=True)
class CutCost:
    """What each part of a unit beyond its first adds to its shard, in microseconds: ``--cut-cost`` (its
    module and class setup run again), plus the unit's collection, which every shard holding a part of a
    test file pays again (``by_unit``: learned per file, planner.collection_lumps)."""

    base: int = 0
    by_unit: Mapping[int, int] = field(default_factory=dict)

    def of(self, unit: int) -> int:
        return self.base + self.by_unit.get(unit, 0)

    def __bool__(self) -> bool:
        return bool(self.base or any(self.by_unit.values()))


def loads(bins: Bins) -> list[int]:
    return [sum(p.cost for p in b) for b in bins]


def counts(bins: Bins) -> list[int]:
    return [sum(p.size for p in b) for b in bins]


def _room(count: int, piece_count: int, max_items: int | None) -> bool:
    return max_items is None or count + piece_count <= max_items


def _least_loaded(load: list[int], count: list[int], need: int, max_items: int | None) -> int:
    best = -1
    for i, value in enumerate(load):
        if _room(count[i], need, max_items) and (best < 0 or value < load[best]):
            best = i
    if best < 0:
        msg = f"--max-items-per-shard {max_items}: {sum(count) + need} items do not fit into {len(load)} shards"
        raise UsageError(msg)
    return best


def lpt(pieces: Sequence[Piece], shard_count: int, max_items: int | None) -> Bins:
    """Longest first onto the least-loaded shard (ties: the lower index)."""
    bins: Bins = [[] for _ in range(shard_count)]
    order = sorted(pieces, key=lambda p: (-p.cost, p.atoms[0].key))
    if max_items is None:
        heap = [(0, i) for i in range(shard_count)]
        for piece in order:
            smallest, index = heapq.heappop(heap)
            bins[index].append(piece)
            heapq.heappush(heap, (smallest + piece.cost, index))
        return bins
    load, count = [0] * shard_count, [0] * shard_count
    for piece in order:
        index = _least_loaded(load, count, piece.size, max_items)
        bins[index].append(piece)
        load[index] += piece.cost
        count[index] += piece.size
    return bins


def improve(bins: Bins, lower_bound: int, max_items: int | None, rounds: int = IMPROVE_ROUNDS) -> Bins:
    """Moves and swaps out of the most-loaded shard while they lower it (in place; also returned)."""
    load, count = loads(bins), counts(bins)
    good_enough = lower_bound + lower_bound // CLOSE_ENOUGH
    for _ in range(rounds):
        hi = max(range(len(bins)), key=lambda i: (load[i], -i))
        if load[hi] <= good_enough or len(bins[hi]) < 1:
            break
        best = _best_exchange(bins, load, count, hi, max_items)
        if best is None:
            break
        _, other, out_piece, in_piece = best
        bins[hi].remove(out_piece)
        bins[other].append(out_piece)
        load[hi] -= out_piece.cost
        load[other] += out_piece.cost
        count[hi] -= out_piece.size
        count[other] += out_piece.size
        if in_piece is not None:
            bins[other].remove(in_piece)
            bins[hi].append(in_piece)
            load[hi] += in_piece.cost
            load[other] -= in_piece.cost
            count[hi] += in_piece.size
            count[other] -= in_piece.size
    return bins


def _best_exchange(
    bins: Bins, load: list[int], count: list[int], hi: int, max_items: int | None
) -> tuple[int, int, Piece, Piece | None] | None:
    """With the least-loaded partner shard that allows one: the move or swap that lowers the larger
    load of the two most."""
    top = sorted(bins[hi], key=_ascending)
    top_costs = [p.cost for p in top]
    partners = sorted((i for i in range(len(bins)) if i != hi), key=lambda i: (load[i], i))[:SWAP_PARTNERS]
    best: tuple[int, int, Piece, Piece | None] | None = None
    for other in partners:
        gap = load[hi] - load[other]
        if gap <= 0:
            break
        # a move of cost c gives max(load_hi - c, load_other + c): best when c is near gap / 2
        for index in _near(top_costs, gap / 2):
            piece = top[index]
            if 0 < piece.cost < gap and _room(count[other], piece.size, max_items):
                new_max = max(load[hi] - piece.cost, load[other] + piece.cost)
                candidate: tuple[int, int, Piece, Piece | None] = (new_max, other, piece, None)
                if best is None or _better(candidate, best):
                    best = candidate
        low = sorted(bins[other], key=_ascending)
        low_costs = [p.cost for p in low]
        for piece in top:
            # a swap moves piece.cost - q.cost: best when that is near gap / 2
            for index in _near(low_costs, piece.cost - gap / 2):
                small = low[index]
                delta = piece.cost - small.cost
                if not 0 < delta < gap:
                    continue
                if max_items is not None and (
                    count[other] - small.size + piece.size > max_items
                    or count[hi] - piece.size + small.size > max_items
                ):
                    continue
                new_max = max(load[hi] - delta, load[other] + delta)
                swap: tuple[int, int, Piece, Piece | None] = (new_max, other, piece, small)
                if best is None or _better(swap, best):
                    best = swap
        if best is not None and best[0] < load[hi]:
            return best  # first improving partner, least loaded first: keeps rounds cheap
    return None


def _ascending(piece: Piece) -> tuple[int, str]:
    return (piece.cost, piece.atoms[0].key)


def _better(a: tuple[int, int, Piece, Piece | None], b: tuple[int, int, Piece, Piece | None]) -> bool:
    def key(c: tuple[int, int, Piece, Piece | None]) -> tuple[int, int, int, str, str]:
        return (c[0], c[1], 0 if c[3] is None else 1, c[2].key, "" if c[3] is None else c[3].key)

    return key(a) < key(b)


def _near(sorted_costs: list[int], target: float) -> tuple[int, ...]:
    """Indexes of the values just below and just above ``target``."""
    i = bisect.bisect_left(sorted_costs, target)
    return tuple(j for j in (i - 1, i) if 0 <= j < len(sorted_costs))


class Strategy(Protocol):
    """How whole pieces are packed. ``improve`` refines a packing that other code produced."""

    def assign(self, pieces: Sequence[Piece], shard_count: int, lower_bound: int, max_items: int | None) -> Bins: ...

    def improve(self, bins: Bins, lower_bound: int, max_items: int | None) -> Bins: ...


class Lpt:
    """Plain LPT, as pytest-split's ``least_duration`` (with a total-order tie-break)."""

    def assign(self, pieces: Sequence[Piece], shard_count: int, lower_bound: int, max_items: int | None) -> Bins:
        return lpt(pieces, shard_count, max_items)

    def improve(self, bins: Bins, lower_bound: int, max_items: int | None) -> Bins:
        return bins


class Balanced:
    """LPT, then moves and swaps out of the slowest shard."""

    def assign(self, pieces: Sequence[Piece], shard_count: int, lower_bound: int, max_items: int | None) -> Bins:
        return improve(lpt(pieces, shard_count, max_items), lower_bound, max_items)

    def improve(self, bins: Bins, lower_bound: int, max_items: int | None) -> Bins:
        return improve(bins, lower_bound, max_items)


STRATEGIES: Final[dict[str, Strategy]] = {"balanced": Balanced(), "lpt": Lpt()}


class _Filler:
    """Shards being filled under a capacity; parts of one unit that meet in a shard are merged."""

    def __init__(self, shard_count: int, capacity: int, cut_cost: CutCost, max_items: int | None) -> None:
        # each shard's pieces by unit, in the order they were placed (a piece merged with a later part moves to
        # the end, as a list's remove and append would): a unit's part is found without a scan of the shard
        self.pieces: list[dict[int, Piece]] = [{} for _ in range(shard_count)]
        self.load = [0] * shard_count
        self.count = [0] * shard_count
        self.capacity, self.cut_cost, self.max_items = capacity, cut_cost, max_items

    @property
    def bins(self) -> Bins:
        return [list(pieces.values()) for pieces in self.pieces]

    def place(self, index: int, unit: int, atoms: Sequence[Atom], extra: int) -> None:
        piece = make_piece(unit, atoms, extra)
        same = self.pieces[index].pop(unit, None)
        if same is not None:  # back in a shard that already has part of this unit: no new cut
            self.load[index] -= same.cost
            self.count[index] -= same.size
            piece = Piece(unit, (*same.atoms, *piece.atoms), same.cost + piece.cost - extra, same.size + piece.size)
        self.pieces[index][unit] = piece
        self.load[index] += piece.cost
        self.count[index] += piece.size

    def prefix_fitting(self, index: int, atoms: Sequence[Atom], extra: int) -> int:
        """How many leading atoms fit into shard ``index`` under the capacity."""
        take, used, used_count = 0, self.load[index] + extra, self.count[index]
        for atom in atoms:
            if used + atom.cost > self.capacity or not _room(used_count, len(atom.items), self.max_items):
                break
            take += 1
            used += atom.cost
            used_count += len(atom.items)
        return take

    def best_fit(self, cost: int, items: int) -> int | None:
        """The fullest shard that still takes ``cost`` under the capacity (ties: the lower index)."""
        best = None
        for i, value in enumerate(self.load):
            fits = value + cost <= self.capacity and _room(self.count[i], items, self.max_items)
            if fits and (best is None or value > self.load[best]):
                best = i
        return best

    def cut_in(self, unit: int, atoms: Sequence[Atom], extra: int) -> None:
        """Fill the emptiest shards with parts of ``atoms``; overflow only when no shard has room."""
        remaining = list(atoms)
        while remaining:
            index = _least_loaded(self.load, self.count, len(remaining[0].items), self.max_items)
            take = self.prefix_fitting(index, remaining, extra)
            if take == len(remaining) or take == 0:
                rest = sum(len(a.items) for a in remaining)
                take = len(remaining) if _room(self.count[index], rest, self.max_items) else max(take, 1)
            self.place(index, unit, remaining[:take], extra)
            remaining = remaining[take:]
            extra = self.cut_cost.of(unit)


def split_fill(
    units: Sequence[Piece], shard_count: int, capacity: int, cut_cost: CutCost, max_items: int | None
) -> Bins:
    """Pack divisible units under ``capacity``, cutting as few as possible:

    1. a unit larger than the capacity fills the emptiest shards in capacity-sized parts;
    2. the rest, largest first, go whole into the fullest shard they fit (best-fit decreasing);
    3. units that fit nowhere whole are cut at atom boundaries into the emptiest shards.
    """
    filler = _Filler(shard_count, capacity, cut_cost, max_items)
    pending: list[tuple[Piece, int]] = []  # (unit or its remainder, extra cost it carries)
    for unit in sorted(units, key=lambda p: p.sort_key):
        remaining, extra = list(unit.atoms), 0
        while sum(a.cost for a in remaining) + extra > capacity:
            index = _least_loaded(filler.load, filler.count, len(remaining[0].items), max_items)
            take = max(1, filler.prefix_fitting(index, remaining, extra))
            if take >= len(remaining):
                break
            filler.place(index, unit.unit, remaining[:take], extra)
            remaining, extra = remaining[take:], cut_cost.of(unit.unit)
        pending.append((make_piece(unit.unit, remaining, extra), extra))
    leftovers: list[tuple[Piece, int]] = []
    for piece, extra in sorted(pending, key=lambda pe: pe[0].sort_key):
        fit = filler.best_fit(piece.cost, piece.size)
        if fit is None:
            leftovers.append((piece, extra))
        else:
            filler.place(fit, piece.unit, piece.atoms, extra)
    for piece, extra in leftovers:
        filler.cut_in(piece.unit, piece.atoms, extra)
    return filler.bins


def wrap_fill(
    units: Sequence[Piece], shard_count: int, capacity: int, cut_cost: CutCost, max_items: int | None
) -> Bins:
    """McNaughton-style: units largest first whole onto the emptiest shard when they fit under
    ``capacity``, else cut at atom boundaries to fill it, the rest going on to the next."""
    filler = _Filler(shard_count, capacity, cut_cost, max_items)
    for unit in sorted(units, key=lambda p: p.sort_key):
        filler.cut_in(unit.unit, unit.atoms, 0)
    return filler.bins


FILLS: Final = (wrap_fill, split_fill)


def _merged(target: Piece, part: Piece) -> Piece:
    """``part`` joined to ``target`` of the same unit: the part's repeated setup cost disappears."""
    atoms = tuple(sorted((*target.atoms, *part.atoms), key=lambda a: a.key))
    return Piece(target.unit, atoms, target.cost + sum(a.cost for a in part.atoms), target.size + part.size)


def rejoin(bins: Bins, limit: int, cut_cost: CutCost, max_items: int | None) -> Bins:
    """Undo cuts that balance does not need: move a cut unit's part into a shard holding another
    part of it while that shard stays within ``limit`` — directly, or swapped against a piece of
    that shard that fits back where the part was. Smallest parts first; ties on keys."""
    del cut_cost  # a rejoined part stops paying the repeated setup: ``_merged`` drops it
    while True:
        where: dict[int, list[int]] = {}
        for index, pieces in enumerate(bins):
            for piece in pieces:
                where.setdefault(piece.unit, []).append(index)
        load, count = loads(bins), counts(bins)
        cut = sorted(
            (piece.cost, piece.key, index, piece)
            for index, pieces in enumerate(bins)
            for piece in pieces
            if len(where[piece.unit]) > 1
        )
        if not _rejoin_one(bins, cut, where=where, load=load, count=count, limit=limit, max_items=max_items):
            return bins


def _rejoin_one(
    bins: Bins,
    cut: list[tuple[int, str, int, Piece]],
    *,
    where: dict[int, list[int]],
    load: list[int],
    count: list[int],
    limit: int,
    max_items: int | None,
) -> bool:
    for _, _, source, part in cut:
        targets = sorted((i for i in where[part.unit] if i != source), key=lambda i: (load[i], i))
        for target in targets:
            home = next(p for p in bins[target] if p.unit == part.unit)
            merged = _merged(home, part)
            grow = merged.cost - home.cost
            if load[target] + grow <= limit and _room(count[target], part.size, max_items):
                bins[target].remove(home)
                bins[target].append(merged)
                bins[source].remove(part)
                return True
            # swap: a piece of ``target`` (not of this unit) goes to ``source`` in exchange
            for other in sorted(bins[target], key=_ascending):
                if other.unit == part.unit or other.cost >= part.cost + (limit - load[source]):
                    continue
                if load[target] + grow - other.cost > limit or load[source] - part.cost + other.cost > limit:
                    continue
                if max_items is not None and (
                    count[target] + part.size - other.size > max_items
                    or count[source] - part.size + other.size > max_items
                ):
                    continue
                bins[target].remove(home)
                bins[target].remove(other)
                bins[target].append(merged)
                bins[source].remove(part)
                same = next((p for p in bins[source] if p.unit == other.unit), None)
                if same is not None:
                    bins[source].remove(same)
                    bins[source].append(_merged(same, other))
                else:
                    bins[source].append(other)
                return True
    return False
