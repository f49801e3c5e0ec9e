"""A shard run by K pytest-xdist workers: how long its items take (docs/planning.md#workers). Pure.

The runner starts ``pytest -n K --dist loadfile`` (run/runner.py), so the shard's time is not the sum of its
items but the makespan of pytest-xdist's own list scheduling of them over K workers. The model replays that
scheduler as pytest-xdist 3.8 writes it (``xdist/scheduler/loadscope.py``, which ``loadfile`` subclasses with
"the scope is the file"), not a textbook LPT:

- a work unit is a file (the shard's part of it when the plan cut it), its tests in collection order;
- the queue holds the units in collection order, then stable-sorted by test count, most first
  (``--loadscope-reorder``, on by default);
- every worker takes one unit, and any worker with at most 2 tests pending takes one more (the
  "at least two work units" rule, xdist #277) — so a worker on a 1-test file holds the next file too;
- each finished test lets its worker take the next unit when it has at most 2 tests pending.

What this leaves out is learned instead: the workers' start-up and collection (each worker collects the whole
selection) is part of the shard overhead aggregate fits per K (report/overhead.py).
"""

from __future__ import annotations

import functools
import heapq
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Final, NamedTuple

from ci_shards.model.matching import item_file
from ci_shards.plan.packing import Bins, Piece
from ci_shards.plan.units import MICRO
from ci_shards.run.workers import MachineFiles, WorkerChoice, choose_workers, parse_workers
from ci_shards.run.xdist_hooks import spread_scope
from ci_shards.timings.store import DEFAULT_VARIANT

LOW_WATERMARK: Final = 2  # xdist's LoadScopeScheduling._reschedule: "> 2" pending tests keep a worker busy
WORKER_ROUNDS: Final = 200  # moves tried at most (a fixed budget, not a clock: the plan never depends on speed)
MOVE_CANDIDATES: Final = 24  # the slowest shard's costliest pieces tried per move
FLOOR_SLACK: Final = 1e-6  # seconds: a makespan's float sums may fall a hair under work ÷ K
# a file is spread over the workers only when that shortens the shard by 2 %: its module fixtures then run on
# every worker, which no estimate shows
SPREAD_GAIN: Final = 0.02
SPREAD_CANDIDATES: Final = 8  # the shard's costliest files tried
# a move must shorten the slower shard by 0.1 %: smaller gains are within any estimate's error, and chasing them
# priced 500 makespans of 500 files each in pygments' plan job (0.3 s on the critical path)
MOVE_GAIN: Final = 0.001
EXCHANGE_SHARDS: Final = 3  # the fastest shards an exchange of a long piece tries


def collection_key(file: str) -> tuple[str, ...]:
    """pytest's walk order: each folder's entries sorted by name, folders and files mixed (``a/`` before
    ``a.py`` is not string order, but ``("a",) < ("a.py",)`` is)."""
    return PurePosixPath(file).parts


def work_units(
    items: Sequence[str],
    seconds: Mapping[str, float],
    spread: frozenset[str] = frozenset(),
    joined: Sequence[Sequence[str]] = (),
) -> list[list[float]]:
    """The shard's items as xdist's queue holds them: one unit per file (per class or function in a file of
    ``spread``, one for each group of ``joined`` files), files in collection order, then by test count, most
    first (a stable sort: equal counts keep collection order)."""
    by_file: dict[str, list[tuple[str, float]]] = {}
    for item in items:  # grouped first: a path's parts once per file, not per item (the plan job's hot loop)
        by_file.setdefault(item_file(item), []).append((item, max(0.0, seconds.get(item, 0.0))))
    return _queued(_spread_out(_joined(by_file, joined), spread))


def _spread_out(
    by_file: dict[str, list[tuple[str, float]]], spread: frozenset[str]
) -> dict[str, list[tuple[str, float]]]:
    """``by_file`` with each file of ``spread`` split into its xdist units (run/xdist_hooks.spread_scope)."""
    for file in spread & by_file.keys():
        for test, seconds in by_file.pop(file):
            by_file.setdefault(spread_scope(test), []).append((test, seconds))
    return by_file


def _queued(by_file: Mapping[str, Sequence[tuple[str, float]]]) -> list[list[float]]:
    """``work_units``' queue from each file's (test, seconds ≥ 0): tests by id, files in collection order,
    then by test count, most first."""
    units = [[s for _, s in sorted(by_file[file])] for file in sorted(by_file, key=_collection_key)]
    return sorted(units, key=lambda unit: -len(unit))


@functools.lru_cache(maxsize=1 << 16)
def _collection_key(file: str) -> tuple[str, ...]:
    return collection_key(file)


def xdist_makespan(units: Sequence[Sequence[float]], workers: int) -> float:
    """When the last of ``units`` finishes under xdist's load-scope scheduling over ``workers`` (see the
    module docstring); with one worker it is the sum."""
    if workers <= 1 or len(units) <= 1:
        return float(sum(sum(u) for u in units))
    queue = deque(units)
    pending: list[deque[float]] = [deque() for _ in range(min(workers, len(units)))]
    for tests in pending:  # the initial distribution: one unit each
        tests.extend(queue.popleft())
    for tests in pending:  # then "at least two work units if possible"
        if queue and len(tests) <= LOW_WATERMARK:
            tests.extend(queue.popleft())
    events = [(_next_decision(0.0, tests, bool(queue)), index) for index, tests in enumerate(pending) if tests]
    heapq.heapify(events)
    finished = 0.0
    while events:
        now, index = heapq.heappop(events)  # ties: the lower worker first, as a deterministic stand-in
        tests = pending[index]
        finished = max(finished, now)
        if queue and len(tests) <= LOW_WATERMARK:
            tests.extend(queue.popleft())
        if tests:
            heapq.heappush(events, (_next_decision(now, tests, bool(queue)), index))
    return finished


def _next_decision(now: float, tests: deque[float], queue_left: bool) -> float:
    """When the worker next may take a unit: its tests finish one by one, and only a finish that leaves at
    most ``LOW_WATERMARK`` pending (or its last, once the queue is empty) can change anything, so the
    finishes before it are summed here, in order (the same float sums as one event per test), and popped."""
    count = max(1, len(tests) - LOW_WATERMARK) if queue_left else len(tests)
    for _ in range(count):
        now += tests.popleft()
    return now


def shard_seconds(
    items: Sequence[str],
    seconds: Mapping[str, float],
    workers: int,
    spread: frozenset[str] = frozenset(),
    joined: Sequence[Sequence[str]] = (),
) -> float:
    """A shard's items' time with ``workers`` xdist workers (their sum with one)."""
    if workers <= 1:
        return float(sum(seconds.get(i, 0.0) for i in items))
    return xdist_makespan(work_units(items, seconds, spread, joined), workers)


def bin_seconds(
    pieces: Sequence[Piece],
    workers: int,
    files_of: PieceFiles | None = None,
    *,
    lumps: Lumps | None = None,
    spread: frozenset[str] = frozenset(),
) -> float:
    """A packed shard's time over ``workers``: its atoms' costs (seconds), in xdist's order; a cut part's
    repeated setup counts in front of its file. ``files_of`` gives each piece's tests by file (a cache of
    ``piece_files``: the moves below price the same pieces thousands of times; given, it must have been made
    with the same ``lumps``). ``lumps``: each file's collection seconds (planner.collection_lumps); every
    worker collects all the shard's files before its first test, so they are paid in front, once per file the
    shard holds part of, and ``piece_files`` takes them out of the tests. ``spread``: files whose tests xdist
    schedules by class or function rather than whole (``best_spread``)."""
    files_of = files_of or functools.partial(piece_files, lumps=lumps)
    merged: dict[str, list[tuple[str, float]]] = {}
    for piece in pieces:
        for file, tests in files_of(piece).items():
            merged.setdefault(file, []).extend(tests)
    # the files in the pieces' order, never a set's: the same float sum every run
    collecting = sum(lumps[file][1] for file in merged if file in lumps) if lumps else 0.0
    return collecting + xdist_makespan(_queued(_spread_out(_joined(merged, joined_files(pieces)), spread)), workers)


def joined_files(pieces: Sequence[Piece]) -> tuple[tuple[str, ...], ...]:
    """The groups of two or more test files a keep-together rule joins in these pieces (two rules sharing a file
    join their groups), each in collection order: xdist runs a group as one unit on one worker (ShardPlan.joined,
    the plugin's ``xdist_scope``), so tests that need another file's test before them (pytest-dependency's scope
    'session', the remedy the plan's note names) find it run, as in one pytest process."""
    parent: dict[str, str] = {}

    def root(file: str) -> str:
        while parent.setdefault(file, file) != file:
            file = parent[file]
        return file

    # a piece of single tests (its size is its atom count) joins nothing: not walked, as the moves ask often
    for atom in (a for piece in pieces if piece.size > len(piece.atoms) for a in piece.atoms if len(a.items) > 1):
        first, *rest = sorted({item_file(item) for item in atom.items}, key=_collection_key)
        for file in rest:
            a, b = sorted((root(first), root(file)), key=_collection_key)
            parent[b] = a
    groups: dict[str, list[str]] = {}
    for file in parent:
        groups.setdefault(root(file), []).append(file)
    joined = [sorted(g, key=_collection_key) for g in groups.values() if len(g) > 1]
    return tuple(tuple(g) for g in sorted(joined, key=lambda g: _collection_key(g[0])))


def _joined(
    by_file: dict[str, list[tuple[str, float]]], joined: Sequence[Sequence[str]]
) -> dict[str, list[tuple[str, float]]]:
    """``by_file`` with each joined group's files as one unit, under its first file."""
    for first, *rest in joined:
        for file in rest:
            by_file.setdefault(first, []).extend(by_file.pop(file, []))
    return by_file


def best_spread(
    pieces: Sequence[Piece], workers: int, lumps: Lumps, files_of: PieceFiles | None = None
) -> tuple[frozenset[str], float]:
    """(the files to spread, the shard's time): a file whose tests outweigh a worker's share keeps one worker
    busy while the others idle under ``--dist loadfile`` (pint 0.25's ``test_quantity.py``, 16 s of a 17.5 s
    shard), so the shard's costliest files are tried spread over the workers by class and function, each kept
    when it shortens the shard's makespan by ``SPREAD_GAIN`` (greedy, in a fixed order: deterministic).
    ``files_of``: a memo of ``piece_files`` made with the same ``lumps`` (``improve_for_workers`` has one)."""
    files_of = files_of or _memo(functools.partial(piece_files, lumps=lumps))
    best = bin_seconds(pieces, workers, files_of, lumps=lumps)
    bound = kept_on_one_worker(pieces)
    totals: dict[str, float] = {}
    for piece in pieces:
        for file, tests in files_of(piece).items():
            if len(tests) > 1 and file not in bound:
                totals[file] = totals.get(file, 0.0) + sum(s for _, s in tests)
    spread: frozenset[str] = frozenset()
    # no spread runs the shard in less than its files' collection and its tests ÷ K (``bin_seconds``): once
    # the best is within SPREAD_GAIN of that, no candidate can be kept, and none is priced (a balanced shard's
    # usual case: it priced 8 makespans for nothing in each of the thousand trades a plan job tries)
    floor = work_floor(pieces, workers, files_of, lumps) if totals else 0.0  # no candidate: nothing to bound
    for file in sorted(totals, key=lambda f: (-totals[f], f))[:SPREAD_CANDIDATES]:
        if floor - FLOOR_SLACK >= best * (1 - SPREAD_GAIN):
            break
        tried = bin_seconds(pieces, workers, files_of, lumps=lumps, spread=spread | {file})
        if tried < best * (1 - SPREAD_GAIN):
            spread, best = spread | {file}, tried
    return spread, best


def work_floor(pieces: Sequence[Piece], workers: int, files_of: PieceFiles, lumps: Lumps | None) -> float:
    """Seconds ``bin_seconds`` never goes under for these pieces, however xdist orders them: the collection of
    every file they hold, paid in front, and their tests' seconds shared evenly by the workers."""
    files: set[str] = set()
    tests = 0.0
    for piece in pieces:
        by_file = files_of(piece)
        files.update(by_file)
        tests += sum(seconds for held in by_file.values() for _, seconds in held)
    collecting = sum(lumps[file][1] for file in files if file in lumps) if lumps else 0.0
    return collecting + tests / workers


def kept_on_one_worker(pieces: Sequence[Piece]) -> set[str]:
    """The files no spread may split: those holding tests a keep-together rule joins across xdist's spread units
    (a file whose tests depend on one another, plan/dependencies.py, is kept whole by a rule naming it). Spread,
    pytest-dependency's ``test_b`` ran on one worker and ``test_a``, its dependency, on another: skipped, where
    plain pytest runs both (conformance with --workers 2, pytest-dependency's examples). A rule joining a class
    (``--keep-together class``) stays within one spread unit and leaves its file free to spread."""
    bound: set[str] = set()
    for piece in pieces:
        for atom in piece.atoms:
            if len(atom.items) > 1 and len({spread_scope(item) for item in atom.items}) > 1:
                bound.update(item_file(item) for item in atom.items)
    return bound


PieceFiles = Callable[[Piece], Mapping[str, Sequence[tuple[str, float]]]]
Lumps = Mapping[str, tuple[str, float]]  # test file → (the item whose cost holds its collection, those seconds)


def piece_files(piece: Piece, *, lumps: Lumps | None = None) -> dict[str, list[tuple[str, float]]]:
    """A piece's tests by file, each with its seconds: its atom's cost shared out, a cut part's repeated
    setup on its first test. With ``lumps``, the collection seconds the packing put in the piece's cost (on
    a file's first item, and in a cut part's repeated setup) are taken out: ``bin_seconds`` pays them in front."""
    extra = (piece.cost - sum(a.cost for a in piece.atoms)) / MICRO
    by_file: dict[str, list[tuple[str, float]]] = {}
    for n, atom in enumerate(piece.atoms):
        share = atom.cost / len(atom.items) / MICRO
        for m, item in enumerate(atom.items):
            seconds = max(0.0, share + (extra if n == 0 and m == 0 else 0.0))  # as ``work_units`` reads them
            by_file.setdefault(item_file(item), []).append((item, seconds))
    if not lumps:
        return by_file
    for file in by_file.keys() & lumps.keys():
        first, seconds = lumps[file]
        held = [test for test, _ in by_file[file] if test == first]
        in_setup = min(max(0.0, extra), seconds) if file == item_file(piece.key) else 0.0
        by_file[file] = _taken_out(by_file[file], seconds * len(held) + in_setup)
    return by_file


def _taken_out(tests: Sequence[tuple[str, float]], seconds: float) -> list[tuple[str, float]]:
    """``seconds`` taken out of a file's tests, from the first on, none below 0, each left in whole
    microseconds (the costs' resolution: no float residue to tip xdist's order)."""
    left = seconds
    result: list[tuple[str, float]] = []
    for test, s in tests:
        taken = min(s, left)
        left -= taken
        result.append((test, round((s - taken) * MICRO) / MICRO))
    return result


def _memo(files_of: PieceFiles) -> PieceFiles:
    """``files_of`` read once per piece (by identity: a piece's items are not hashed again)."""
    seen: dict[int, tuple[Piece, Mapping[str, Sequence[tuple[str, float]]]]] = {}

    def cached(piece: Piece) -> Mapping[str, Sequence[tuple[str, float]]]:
        if id(piece) not in seen:
            seen[id(piece)] = (piece, files_of(piece))  # the piece kept alive: its id stays its own
        return seen[id(piece)][1]

    return cached


def improve_for_workers(
    bins: Bins, workers: int, max_items: int | None, rounds: int = WORKER_ROUNDS, *, lumps: Lumps | None = None
) -> Bins:
    """Moves of whole pieces out of the shard whose K-worker makespan is longest, into the one whose is
    shortest, while that lowers the longer of the two (packing balanced the sums; with K workers a
    shard of a few long files can be the slowest at an equal sum); when no move does, an exchange of one of its
    long pieces for shorter ones of a faster shard (``_Shards.best_exchange``). Deterministic: the candidates are the
    slowest shard's ``MOVE_CANDIDATES`` costliest pieces, ties to the piece key and the lower shard."""
    bins = [list(b) for b in bins]
    files_of = _memo(functools.partial(piece_files, lumps=lumps))
    # each shard's costliest files spread over its workers first (best_spread): a shard slow only because one
    # file keeps a worker busy is not made slower by moves, and the moves see what the plan will run
    spreads = [best_spread(b, workers, lumps or {}, files_of)[0] for b in bins]
    shards = _Shards(bins, workers, max_items=max_items, files_of=files_of, lumps=lumps, spreads=spreads)
    for _ in range(rounds):
        slow = max(range(len(bins)), key=lambda i: (shards.times[i], -i))
        fast = min(range(len(bins)), key=lambda i: (shards.times[i], i))
        if slow == fast or len(bins[slow]) == 1:
            break
        change = shards.best_move(slow, fast) or shards.best_exchange(slow)
        if change is None:
            break
        shards.apply(slow, change)
    return bins


class _Change(NamedTuple):
    """Pieces traded between the slowest shard and ``other``, and the two shards' makespans after it."""

    other: int
    out: Piece  # leaving the slowest shard
    back: tuple[Piece, ...]  # coming to it from ``other``
    left: float
    right: float
    spreads: tuple[frozenset[str], frozenset[str]] | None = None  # the two shards' spreads after it, when new


class _Shards:
    """The shards being improved and their K-worker makespans (``improve_for_workers``'s state)."""

    def __init__(
        self,
        bins: Bins,
        workers: int,
        *,
        max_items: int | None,
        files_of: PieceFiles,
        lumps: Lumps | None,
        spreads: list[frozenset[str]],
    ) -> None:
        self.bins, self.workers, self.max_items = bins, workers, max_items
        self.files_of, self.lumps, self.spreads = files_of, lumps, spreads
        self.times = [self.seconds(b, i) for i, b in enumerate(bins)]

    def _pair_floor(self, slow: int, other: int) -> float:
        """Seconds the longer of ``slow`` and ``other`` cannot go under, whatever pieces they trade: a trade
        keeps the files the two hold between them (each collected at least once) and their tests' sum, so the
        longer is at least half their ``work_floor``. A pair whose floor reaches the mark has nothing to price."""
        return self._floor([*self.bins[slow], *self.bins[other]]) / 2

    def _floor(self, pieces: Sequence[Piece]) -> float:
        """``work_floor`` less the float slack: a bound never above what ``seconds`` can price."""
        return work_floor(pieces, self.workers, self.files_of, self.lumps) - FLOOR_SLACK

    def seconds(self, pieces: Sequence[Piece], shard: int) -> float:
        return bin_seconds(pieces, self.workers, self.files_of, lumps=self.lumps, spread=self.spreads[shard])

    def _mark(self, slow: int, best: _Change | None) -> float:
        """What a change must bring both its shards under: the slowest shard's time less ``MOVE_GAIN``, and
        the best change found so far's longer side."""
        bar = self.times[slow] * (1 - MOVE_GAIN)
        return bar if best is None else min(bar, max(best.left, best.right))

    def best_move(self, slow: int, fast: int) -> _Change | None:
        """The move of one piece from ``slow`` to ``fast`` that leaves the longer of the two shortest. A
        candidate whose receiving shard's work over K (a floor under any makespan) already reaches the mark
        is not priced: it could not be chosen."""
        best: _Change | None = None
        if self._pair_floor(slow, fast) >= self._mark(slow, best):
            return None
        fast_work, fast_size = sum(p.cost for p in self.bins[fast]), sum(p.size for p in self.bins[fast])
        for piece in sorted(self.bins[slow], key=lambda p: p.sort_key)[:MOVE_CANDIDATES]:
            if self.max_items is not None and fast_size + piece.size > self.max_items:
                continue
            mark = self._mark(slow, best)
            if (fast_work + piece.cost) / MICRO / self.workers - FLOOR_SLACK >= mark:
                continue
            right = self.seconds([*self.bins[fast], piece], fast)
            if right >= mark:
                continue
            left = self.seconds([p for p in self.bins[slow] if p is not piece], slow)
            if max(left, right) < mark:
                best = _Change(fast, piece, (), left, right)
        return best

    def best_exchange(self, slow: int) -> _Change | None:
        """One of ``slow``'s pieces longer than its makespan's excess over its work ÷ K (a lump: pint 0.25's
        ``test_application_registry.py`` and ``test_contexts.py``, 5.6 and 3.3 s in a shard of 4.7 s a worker,
        5.6 s long) traded for shorter pieces of one of the ``EXCHANGE_SHARDS`` fastest shards, as much work
        back as keeps the two shards' sums even. No single move helps there: any other shard that took the
        lump would end slower than the slowest is."""
        lump = self.times[slow] - sum(p.cost for p in self.bins[slow]) / MICRO / self.workers
        others = sorted((i for i in range(len(self.bins)) if i != slow), key=lambda i: (self.times[i], i))
        others = [i for i in others[:EXCHANGE_SHARDS] if self._pair_floor(slow, i) < self._mark(slow, None)]
        best: _Change | None = None
        for piece in sorted(self.bins[slow], key=lambda p: p.sort_key)[:MOVE_CANDIDATES]:
            if piece.cost / MICRO <= lump:
                break
            for other in others:
                change = self._exchange(slow, other, piece, self._mark(slow, best))
                if change is not None:
                    best = change
        return best

    def _exchange(self, slow: int, other: int, piece: Piece, mark: float) -> _Change | None:
        """``piece`` for ``other``'s longest pieces that fit under half the two shards' work difference plus
        the piece's cost (greedy, longest first), when both end under ``mark``, each shard's costliest files
        spread anew (``best_spread``): a lump may be a file that only spreads well among other files."""
        gap = (sum(p.cost for p in self.bins[slow]) - sum(p.cost for p in self.bins[other])) / 2
        room = piece.cost - max(0.0, gap)
        back: list[Piece] = []
        for candidate in sorted(self.bins[other], key=lambda p: p.sort_key):
            if candidate.cost < piece.cost and candidate.cost <= room:
                back.append(candidate)
                room -= candidate.cost
        if not back or not self._fits(slow, other, piece, back):
            return None
        returned = {id(p) for p in back}
        kept = [*(p for p in self.bins[other] if id(p) not in returned), piece]
        rest = [*(p for p in self.bins[slow] if p is not piece), *back]
        if max(self._floor(kept), self._floor(rest)) >= mark:
            return None  # a side's floor already at the mark: nothing to price
        right_spread, right = best_spread(kept, self.workers, self.lumps or {}, self.files_of)
        if right >= mark:
            return None
        left_spread, left = best_spread(rest, self.workers, self.lumps or {}, self.files_of)
        if max(left, right) >= mark:
            return None
        return _Change(other, piece, tuple(back), left, right, (left_spread, right_spread))

    def _fits(self, slow: int, other: int, piece: Piece, back: Sequence[Piece]) -> bool:
        if self.max_items is None:
            return True
        traded = piece.size - sum(p.size for p in back)  # items the slowest shard gives, net
        slow_size, other_size = (sum(p.size for p in self.bins[s]) for s in (slow, other))
        return max(slow_size - traded, other_size + traded) <= self.max_items

    def apply(self, slow: int, change: _Change) -> None:
        self.bins[slow].remove(change.out)
        self.bins[change.other].append(change.out)
        for piece in change.back:
            self.bins[change.other].remove(piece)
            self.bins[slow].append(piece)
        self.times[slow], self.times[change.other] = change.left, change.right
        if change.spreads is not None:
            self.spreads[slow], self.spreads[change.other] = change.spreads


def worker_lower_bound(costs: Sequence[int], shard_count: int, workers: int) -> float:
    """Seconds no plan of N shards of K workers beats: all the work over N·K workers, or the longest atom."""
    if not costs:
        return 0.0
    return max(sum(costs) / (shard_count * workers), *costs) / MICRO


def planned_workers(text: str, *, files: int, worker_memory: int, machine: MachineFiles) -> WorkerChoice:
    """The K a plan is made for: ``--workers K``, or ``auto`` on this machine's ``machine`` (the plan job's,
    which a CI matrix of like runners shares), capped by the files there are to share out."""
    return choose_workers(parse_workers(text), machine, worker_memory=worker_memory, scopes=max(1, files))


def overhead_variant(variant: str | None, workers: int) -> str | None:
    """The timings store's key for the learned overhead of shards run by ``workers`` workers: the variant's
    own for one (as before workers existed), ``<variant>@workers=K`` above (start-up grows with K)."""
    if workers <= 1:
        return variant
    return f"{variant or DEFAULT_VARIANT}@workers={workers}"
