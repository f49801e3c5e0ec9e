"""Balancing items into shards: estimates, keep-together groups, granularity, the plan. Pure.

Inputs are a set of item ids and ``{item: seconds}`` estimates; the output is a ``Plan``. The items
are de-duplicated and sorted first and every later step breaks ties on item ids, so the same items
and timings give the same plan bytes whatever order they were collected in.

Granularity ``auto`` (the default) keeps files whole and cuts only the few that balance needs:
it packs whole files (LPT + moves/swaps) and, when that misses the lower bound by more than
``AUTO_TOLERANCE``, fills shards up to a capacity near the bound, cutting files at test boundaries
(see ``packing.split_fill``), tries a few capacities and keeps the plan with the fewest cuts among
those within the tolerance. Lower bound: LB = max(total/N, longest atom, N-th + (N+1)-th longest
atom) over tests and keep-together groups (notes/splitting.md section 7).
"""

from __future__ import annotations

import fnmatch
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ci_shards.errors import UsageError
from ci_shards.estimates import apply_weights, estimate
from ci_shards.model import Granularity, Plan, ShardPlan, item_file
from ci_shards.packing import (
    FILLS,
    STRATEGIES,
    Atom,
    Bins,
    Piece,
    loads,
    make_piece,
    rejoin,
)

MICRO: Final = 1_000_000
MIN_COST: Final = 1_000  # 1 ms: no item is free (plan.json's resolution), so counts still matter
AUTO_TOLERANCE: Final = 0.005
CAPACITY_STEPS: Final = (0.0, 0.0025, 0.005, 0.01, 0.02, 0.04)  # capacities tried: LB·(1 + step)
CLASS_RULE: Final = "class"


def _class_key(item: str) -> str | None:
    parts = item.split("::")
    return "::".join(parts[:2]) if len(parts) >= 3 else None


def build_atoms(items: Sequence[str], keep_together: Sequence[str], seconds: Mapping[str, float]) -> list[Atom]:
    """Items joined by keep-together rules (``class``, or glob patterns: all matches of one pattern
    stay together), as atoms sorted by key (``items`` must be sorted and unique)."""
    if not keep_together:  # the common case, and the one that must be fast for 100,000 items
        return [Atom(key=item, items=(item,), cost=_micro(seconds[item])) for item in items]
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
    return [
        Piece(n, tuple(group), sum(a.cost for a in group), sum(len(a.items) for a in group))
        for n, group in enumerate(grouped[name] for name in sorted(grouped))
    ]


def lower_bound(costs: Sequence[int], shard_count: int) -> int:
    """max(total/N, longest, N-th + (N+1)-th longest): no plan can beat it."""
    if not costs:
        return 0
    ordered = sorted(costs, reverse=True)
    pair = ordered[shard_count - 1] + ordered[shard_count] if len(ordered) > shard_count else 0
    return max(math.ceil(sum(ordered) / shard_count), ordered[0], pair)


def _pairs(bins: Bins) -> int:
    """(unit, shard) pairs: each extra shard a unit is cut into repeats its setup once more."""
    return sum(len({p.unit for p in pieces}) for pieces in bins)


def _pack_auto(
    units: Sequence[Piece], shard_count: int, lb: int, *, strategy_name: str, cut_cost: int, max_items: int | None
) -> Bins:
    strategy = STRATEGIES[strategy_name]
    accept = math.floor(lb * (1 + AUTO_TOLERANCE))

    def score(bins: Bins) -> tuple[bool, int, int, int]:
        makespan = max(loads(bins))
        return (makespan > accept, makespan if makespan > accept else 0, _pairs(bins), makespan)

    best: Bins | None = None
    best_score = (True, 0, 0, 0)
    try:
        best = strategy.assign(units, shard_count, lb, max_items)
        best_score = score(best)
        if not best_score[0]:
            return best
    except UsageError:  # whole files cannot meet --max-items-per-shard: cutting them can
        best = None
    for step, fill in itertools.product(CAPACITY_STEPS, FILLS):
        capacity = math.floor(lb * (1 + step))
        bins = fill(units, shard_count, capacity, cut_cost, max_items)
        bins = strategy.improve(bins, lb, max_items)
        bins = rejoin(bins, max(accept, *loads(bins)), cut_cost, max_items)
        candidate = score(bins)
        if best is None or candidate < best_score:
            best, best_score = bins, candidate
    assert best is not None  # CAPACITY_STEPS is not empty: the loop packed at least once
    return best


def _merge_same_shard(bins: Bins) -> Bins:
    """Parts of one unit that ended in the same shard are one part: its setup is paid once."""
    merged: Bins = []
    for pieces in bins:
        if len({p.unit for p in pieces}) == len(pieces):
            merged.append(pieces)
            continue
        by_unit: dict[int, list[Piece]] = {}
        for piece in pieces:
            by_unit.setdefault(piece.unit, []).append(piece)
        shard: list[Piece] = []
        for parts in by_unit.values():
            if len(parts) == 1:
                shard.append(parts[0])
                continue
            first = min(parts, key=lambda p: p.key)
            extra = first.cost - sum(a.cost for a in first.atoms)
            shard.append(
                make_piece(first.unit, sorted((a for p in parts for a in p.atoms), key=lambda a: a.key), extra)
            )
        merged.append(shard)
    return merged


def _fill_empty(bins: Bins) -> Bins:
    """No shard stays empty while another holds more than one atom: an empty shard takes the
    smallest atom of the most-loaded shard that holds more than one (so with at least N atoms,
    no shard is empty; with fewer, exactly N - atoms are)."""
    while any(not b for b in bins):
        empty = next(i for i, b in enumerate(bins) if not b)
        load = loads(bins)
        donors = [i for i, b in enumerate(bins) if sum(len(p.atoms) for p in b) > 1]
        if not donors:
            break
        donor = max(donors, key=lambda i: (load[i], -i))
        piece, atom = min(((p, a) for p in bins[donor] for a in p.atoms), key=lambda pa: (pa[1].cost, pa[1].key))
        bins[donor].remove(piece)
        rest = [a for a in piece.atoms if a is not atom]
        if rest:
            bins[donor].append(make_piece(piece.unit, rest, piece.cost - sum(a.cost for a in piece.atoms)))
        bins[empty].append(make_piece(piece.unit, [atom]))
    return bins


def plan_items(
    items: Iterable[str],
    durations: Mapping[str, float],
    shards: int,
    *,
    granularity: Granularity = Granularity.AUTO,
    keep_together: Sequence[str] = (),
    weights: Mapping[str, float] | None = None,
    max_items_per_shard: int | None = None,
    strategy: str = "balanced",
    cut_cost: float = 0.0,
    notes: Sequence[str] = (),
) -> Plan:
    """The plan for ``items`` in ``shards`` shards (``created_at`` is left for the caller to fill)."""
    if shards < 1:
        msg = f"--shards must be at least 1, not {shards}"
        raise UsageError(msg)
    if strategy not in STRATEGIES:
        msg = f"unknown strategy {strategy!r} (choose from {', '.join(sorted(STRATEGIES))})"
        raise UsageError(msg)
    ordered = sorted(set(items))
    if max_items_per_shard is not None and len(ordered) > shards * max_items_per_shard:
        msg = (
            f"{len(ordered)} items do not fit into {shards} shards of at most {max_items_per_shard}"
            f" (--max-items-per-shard); use at least {math.ceil(len(ordered) / max_items_per_shard)} shards"
        )
        raise UsageError(msg)
    est = estimate(ordered, durations)
    seconds = apply_weights(est.seconds, weights or {})
    atoms = build_atoms(ordered, keep_together, seconds)
    if max_items_per_shard is not None:
        big = next((a for a in atoms if len(a.items) > max_items_per_shard), None)
        if big is not None:
            msg = f"keep-together group of {big.key!r} has {len(big.items)} items, over --max-items-per-shard"
            raise UsageError(msg)
    lb = lower_bound([a.cost for a in atoms], shards)
    cost = _micro_cost(cut_cost)
    if granularity is Granularity.TEST:
        bins = STRATEGIES[strategy].assign(
            [make_piece(n, [a]) for n, a in enumerate(atoms)], shards, lb, max_items_per_shard
        )
    elif granularity is Granularity.FILE:
        units = build_units(atoms)
        too_big = next((u for u in units if max_items_per_shard is not None and u.size > max_items_per_shard), None)
        if too_big is not None:
            msg = (
                f"{item_file(too_big.key)} has {too_big.size} items, more than --max-items-per-shard"
                f" {max_items_per_shard} allows in one shard; use --granularity auto or test"
            )
            raise UsageError(msg)
        bins = STRATEGIES[strategy].assign(units, shards, lb, max_items_per_shard)
    else:
        bins = _pack_auto(
            build_units(atoms), shards, lb, strategy_name=strategy, cut_cost=cost, max_items=max_items_per_shard
        )
    if granularity is not Granularity.FILE:
        bins = _fill_empty(bins)
    bins = _merge_same_shard(bins)
    all_notes = [*notes]
    if est.note:
        all_notes.append(est.note)
    empty = [i + 1 for i, b in enumerate(bins) if not b]
    if empty:
        unit = "files" if granularity is Granularity.FILE else "items"
        available = len(build_units(atoms)) if granularity is Granularity.FILE else len(atoms)
        all_notes.append(
            f"{len(empty)} of {shards} shards are empty ({_ranges(empty)}): only {available} {unit} to share;"
            " an empty shard passes as 'empty'"
        )
    shard_plans = tuple(
        ShardPlan(
            index=i + 1,
            items=tuple(sorted(item for p in b for a in p.atoms for item in a.items)),
            estimated_seconds=sum(p.cost for p in b) / MICRO,
        )
        for i, b in enumerate(bins)
    )
    return Plan(
        total=shards,
        granularity=granularity,
        shards=shard_plans,
        lower_bound_seconds=lb / MICRO,
        unknown_items=est.unknown,
        files_cut=files_cut(shard_plans),
        notes=tuple(all_notes),
    )


def _micro_cost(seconds: float) -> int:
    if not (math.isfinite(seconds) and seconds >= 0):
        msg = f"--cut-cost must be a non-negative number of seconds, not {seconds!r}"
        raise UsageError(msg)
    return round(seconds * MICRO)


def _ranges(numbers: Sequence[int]) -> str:
    first, last = numbers[0], numbers[-1]
    if last - first + 1 == len(numbers) and len(numbers) > 1:
        return f"shards {first}-{last}"
    return (
        "shard " + ", ".join(str(n) for n in numbers)
        if len(numbers) == 1
        else "shards " + ", ".join(str(n) for n in numbers)
    )


def files_cut(shards: Sequence[ShardPlan]) -> int:
    """Files whose items are in more than one shard."""
    seen: dict[str, int] = {}
    for shard in shards:
        for file in {item_file(i) for i in shard.items}:
            seen[file] = seen.get(file, 0) + 1
    return sum(1 for n in seen.values() if n > 1)


def fragmentation(plan: Plan) -> float:
    """(file, shard) pairs per file: 1.0 means no file was cut."""
    pairs = sum(len({item_file(i) for i in shard.items}) for shard in plan.shards)
    files = len({item_file(i) for i in plan.items})
    return pairs / files if files else 1.0


@dataclass(frozen=True)
class AutoChoice:
    plan: Plan
    reason: str


def choose_shards(
    items: Iterable[str],
    durations: Mapping[str, float],
    *,
    target_seconds: float,
    shard_overhead: float = 0.0,
    max_shards: int,
    **options: object,
) -> AutoChoice:
    """The smallest N ≤ ``max_shards`` whose predicted slowest shard plus ``shard_overhead`` fits
    ``target_seconds`` (or ``max_shards`` when none does), with the reason in words."""
    if not (math.isfinite(target_seconds) and target_seconds > 0):
        msg = f"--target-seconds must be a positive number, not {target_seconds!r}"
        raise UsageError(msg)
    ordered = sorted(set(items))

    def make(n: int) -> Plan:
        return plan_items(ordered, durations, n, **options)  # type: ignore[arg-type]

    def fits(plan: Plan) -> bool:
        return plan.estimated_makespan + shard_overhead <= target_seconds

    max_items = options.get("max_items_per_shard")
    fewest = max(1, math.ceil(len(ordered) / max_items)) if isinstance(max_items, int) and max_items > 0 else 1
    if fewest > max_shards:
        msg = (
            f"{len(ordered)} items need at least {fewest} shards of {max_items} (--max-items-per-shard) > --max-shards"
        )
        raise UsageError(msg)
    first = make(fewest)
    if fits(first) or not ordered:
        why = f" (--max-items-per-shard {max_items})" if fewest > 1 else ""
        reason = (
            f"{fewest} shard{'s' if fewest > 1 else ''}{why}: the slowest is predicted at"
            f" {first.estimated_makespan:.1f} s + {shard_overhead:g} s overhead ≤ target {target_seconds:g} s"
        )
        return AutoChoice(_with_note(first, reason), reason)
    total = sum(s.estimated_seconds for s in first.shards)
    budget = target_seconds - shard_overhead
    low = max(fewest, min(max_shards, math.ceil(total / budget) if budget > 0 else max_shards))
    # the makespan falls (almost always) monotonically with N: binary search for the first fit
    lo, hi = low, max_shards
    plans: dict[int, Plan] = {}
    while lo < hi:
        mid = (lo + hi) // 2
        plans[mid] = plans.get(mid) or make(mid)
        if fits(plans[mid]):
            hi = mid
        else:
            lo = mid + 1
    chosen = plans.get(lo) or make(lo)
    predicted = chosen.estimated_makespan
    if fits(chosen):
        reason = (
            f"{lo} shards: the slowest is predicted at {predicted:.1f} s + {shard_overhead:g} s overhead"
            f" ≤ target {target_seconds:g} s"
        )
        if lo > fewest:
            fewer = plans.get(lo - 1) or make(lo - 1)
            reason += f"; {lo - 1} would take {fewer.estimated_makespan + shard_overhead:.1f} s"
    else:
        reason = (
            f"{lo} shards (--max-shards): the target {target_seconds:g} s is not reachable; the slowest shard is"
            f" predicted at {predicted:.1f} s + {shard_overhead:g} s overhead (lower bound"
            f" {chosen.lower_bound_seconds:.1f} s)"
        )
    return AutoChoice(_with_note(chosen, reason), reason)


def _with_note(plan: Plan, note: str) -> Plan:
    return Plan(
        total=plan.total,
        granularity=plan.granularity,
        shards=plan.shards,
        lower_bound_seconds=plan.lower_bound_seconds,
        unknown_items=plan.unknown_items,
        files_cut=plan.files_cut,
        notes=(note, *plan.notes),
    )
