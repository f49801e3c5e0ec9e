"""Shaving a balance tail: tests moved one by one out of the slowest shard of a file-keeping plan.

Pure and deterministic. A fill that keeps files whole can miss the makespan that packing single
tests reaches when the suite has a few large tests (the fill's capacity is near the lower bound,
which test-level packing cannot reach either, so parts overflow). Rather than cutting every file
the way test-level packing does, this moves single tests (atoms) out of the most-loaded shard
until it is within a limit, preferring a shard that already holds part of the same file (no new
setup), then one that covers the excess in one move, then the least-loaded one. Ties go to the
lower shard index and the smaller item id.
"""

from __future__ import annotations

from typing import Final

from ci_shards.plan.packing import Atom, Bins, CutCost, Piece, loads, make_piece

MOVES_PER_SHARD: Final = 4  # move budget: a fixed count, never a clock


def shave(bins: Bins, limit: int, cut_cost: CutCost, max_items: int | None) -> Bins | None:
    """A copy of ``bins`` with every shard within ``limit``, or None when the move budget or the
    limits (``max_items``) leave a shard above it."""
    state = _Shards(bins, cut_cost, max_items)
    for _ in range(MOVES_PER_SHARD * len(bins) + 16):
        hi = max(range(len(bins)), key=lambda i: (state.load[i], -i))
        if state.load[hi] <= limit:
            return state.shards
        move = state.best_move(hi, limit)
        if move is None:
            return None
        piece, atom, target = move
        state.take(hi, piece, atom)
        state.give(target, piece, atom)
    return None


class _Shards:
    """Shards being shaved, with their loads and item counts kept in step."""

    def __init__(self, bins: Bins, cut_cost: CutCost, max_items: int | None) -> None:
        self.shards = [list(pieces) for pieces in bins]
        self.load = loads(self.shards)
        self.count = [sum(p.size for p in pieces) for pieces in self.shards]
        self.cut_cost, self.max_items = cut_cost, max_items

    def best_move(self, hi: int, limit: int) -> tuple[Piece, Atom, int] | None:
        excess = self.load[hi] - limit
        holders: dict[int, set[int]] = {}
        for index, pieces in enumerate(self.shards):
            for p in pieces:
                holders.setdefault(p.unit, set()).add(index)
        best: tuple[tuple[int, int, int, int, int, str], Piece, Atom, int] | None = None
        for piece in self.shards[hi]:
            for atom in piece.atoms:
                for target in range(len(self.shards)):
                    new_pair, grow = self._cost_of_move(piece, atom, target in holders[piece.unit])
                    if target == hi or not self._fits(target, grow, atom, limit):
                        continue
                    covers = atom.cost >= excess
                    # fewest new pairs; then one move that covers the excess (its smallest such
                    # test), else the largest test that fits; then the least-loaded shard
                    key = (
                        new_pair,
                        not covers,
                        atom.cost if covers else -atom.cost,
                        self.load[target],
                        target,
                        atom.key,
                    )
                    if best is None or key < best[0]:
                        best = (key, piece, atom, target)
        return None if best is None else (best[1], best[2], best[3])

    def _cost_of_move(self, piece: Piece, atom: Atom, joins_its_file: bool) -> tuple[int, int]:
        """(new (file, shard) pairs, load the target shard gains) for moving ``atom`` out of ``piece``."""
        if joins_its_file:
            return 0, atom.cost
        if len(piece.atoms) == 1:  # the whole part moves, with whatever setup it carries
            return 0, piece.cost
        return 1, atom.cost + self.cut_cost.of(piece.unit)

    def _fits(self, target: int, grow: int, atom: Atom, limit: int) -> bool:
        if self.load[target] + grow > limit:
            return False
        return self.max_items is None or self.count[target] + len(atom.items) <= self.max_items

    def take(self, index: int, piece: Piece, atom: Atom) -> None:
        self.shards[index].remove(piece)
        rest = [a for a in piece.atoms if a is not atom]
        if rest:
            extra = piece.cost - sum(a.cost for a in piece.atoms)
            self.shards[index].append(make_piece(piece.unit, rest, extra))
            self.load[index] -= atom.cost
        else:  # the part is gone, and with it the setup it repeated
            self.load[index] -= piece.cost
        self.count[index] -= len(atom.items)

    def give(self, index: int, source: Piece, atom: Atom) -> None:
        same = next((p for p in self.shards[index] if p.unit == source.unit), None)
        if same is None:
            whole = len(source.atoms) == 1
            extra = source.cost - atom.cost if whole else self.cut_cost.of(source.unit)
            self.shards[index].append(make_piece(source.unit, [atom], extra))
            self.load[index] += atom.cost + extra
        else:
            self.shards[index].remove(same)
            extra = same.cost - sum(a.cost for a in same.atoms)
            self.shards[index].append(make_piece(source.unit, sorted((*same.atoms, atom), key=lambda a: a.key), extra))
            self.load[index] += atom.cost
        self.count[index] += len(atom.items)
