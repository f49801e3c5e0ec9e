"""Balancing items into shards: estimates, keep-together groups, granularity, the plan. Pure.

Inputs are a set of item ids and ``{item: seconds}`` estimates; the output is a ``Plan``. The items
are de-duplicated and sorted first and every later step breaks ties on item ids, so the same items
and timings give the same plan bytes whatever order they were collected in.

Granularity ``auto`` (the default) keeps files whole and cuts only the few that balance needs:
it packs whole files (LPT + moves/swaps) and, when that misses the lower bound by more than
``AUTO_TOLERANCE``, fills shards up to a capacity near the bound, cutting files at test boundaries
(``packing.wrap_fill`` and ``packing.split_fill``, each followed by moves/swaps and ``rejoin``),
for a few capacities, and keeps the plan with the fewest (file, shard) pairs among those within
the tolerance of LB (or, when none is, of the best makespan found).

No balance tail: the tests are also packed one by one (what granularity ``test`` reaches, R).
When R is far above LB (a few large tests), capacities near R are tried too; when the chosen plan
is still more than ``TAIL_TOLERANCE`` above R, single tests are shaved out of the slowest shards
of every candidate (``shave``) and the test-level packing itself (its needless cuts undone by
``rejoin``) joins them, so auto's slowest shard is never more than 1 % above R while keeping the
fewest (file, shard) pairs among the plans that meet that. Lower bound:
LB = max(total/N, longest atom, N-th + (N+1)-th longest atom) over tests and keep-together groups
(the standard P||Cmax bound: two of the N+1 longest atoms must share a shard).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from ci_shards.common.console import plural
from ci_shards.common.errors import UsageError
from ci_shards.model.matching import item_file
from ci_shards.model.plan import Granularity, Plan, ShardPlan, pick_unowned_shard, shards_per_file
from ci_shards.plan.estimates import Estimates, apply_weights, estimate
from ci_shards.plan.packing import (
    FILLS,
    STRATEGIES,
    Atom,
    Bins,
    CutCost,
    Piece,
    loads,
    make_piece,
    rejoin,
)
from ci_shards.plan.shave import shave
from ci_shards.plan.units import MICRO, build_atoms, build_units, unmatched_rules
from ci_shards.plan.workers import (
    Lumps,
    best_spread,
    bin_seconds,
    improve_for_workers,
    joined_files,
    worker_lower_bound,
)
from ci_shards.run.xdist_hooks import spread_scope

AUTO_TOLERANCE: Final = 0.005
CAPACITY_STEPS: Final = (0.0, 0.0025, 0.005, 0.01, 0.02, 0.04)  # capacities tried: LB·(1 + step)
# auto's slowest shard stays within 1 % of what test-level packing reaches (promised: 2 %)
TAIL_TOLERANCE: Final = 0.01
REACHED_STEPS: Final = (0.0, 0.005, 0.01)  # and test-level makespan·(1 + step) when that is far above LB
CUT_NOTE_FILES: Final = 5


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
    units: Sequence[Piece], shard_count: int, lb: int, *, strategy_name: str, cut_cost: CutCost, max_items: int | None
) -> Bins:
    strategy = STRATEGIES[strategy_name]
    accept = math.floor(lb * (1 + AUTO_TOLERANCE))
    candidates: list[tuple[int, int, int, Bins]] = []  # (makespan, pairs, order, bins)
    try:
        whole = strategy.assign(units, shard_count, lb, max_items)
        makespan = max(loads(whole))
        if makespan <= accept:
            return whole  # no file cut and balanced: nothing can beat it
        candidates.append((makespan, _pairs(whole), 0, whole))
    except UsageError:  # whole files cannot meet --max-items-per-shard: cutting them can
        pass
    reference = _test_level(units, shard_count, lb, strategy_name=strategy_name, cut_cost=cut_cost, max_items=max_items)
    reached = max(loads(reference)) if reference is not None else lb
    for capacity, fill in itertools.product(_capacities(lb, reached), FILLS):
        bins = fill(units, shard_count, capacity, cut_cost, max_items)
        bins = strategy.improve(bins, lb, max_items)
        bins = rejoin(bins, max(accept, *loads(bins)), cut_cost, max_items)
        candidates.append((max(loads(bins)), _pairs(bins), len(candidates), bins))
    # the fewest (file, shard) pairs among the plans within the tolerance of LB, or, when none is,
    # within the tolerance of the best makespan found
    limit = max(accept, math.floor(min(c[0] for c in candidates) * (1 + AUTO_TOLERANCE)))
    chosen = _fewest_pairs(candidates, limit)
    tail = math.floor(reached * (1 + TAIL_TOLERANCE))
    if reference is None or chosen[0] <= tail:
        return chosen[3]
    # a balance tail: cutting files at test boundaries does better than every fill. Shave the
    # fills (single tests out of their slowest shard) and, as the floor that always meets the
    # limit, add the test-level packing with its needless cuts undone.
    for candidate in sorted(candidates, key=lambda c: (c[1], c[0], c[2])):
        shaved = shave(candidate[3], tail, cut_cost, max_items)
        if shaved is not None:
            candidates.append((max(loads(shaved)), _pairs(shaved), len(candidates), shaved))
    bins = rejoin(reference, tail, cut_cost, max_items)
    candidates.append((max(loads(bins)), _pairs(bins), len(candidates), bins))
    return _fewest_pairs(candidates, max(tail, min(c[0] for c in candidates)))[3]


def _fewest_pairs(candidates: Sequence[tuple[int, int, int, Bins]], limit: int) -> tuple[int, int, int, Bins]:
    return min((c for c in candidates if c[0] <= limit), key=lambda c: (c[1], c[0], c[2]))


def _capacities(lb: int, reached: int) -> list[int]:
    """Fill capacities near LB and, when test-level packing cannot get near LB (a few large
    tests), near what it does reach: a fill under a capacity below that overflows."""
    near_lb = {math.floor(lb * (1 + step)) for step in CAPACITY_STEPS}
    if reached > lb * (1 + CAPACITY_STEPS[-1]):
        near_lb |= {math.floor(reached * (1 + step)) for step in REACHED_STEPS}
    return sorted(near_lb)


def _test_level(
    units: Sequence[Piece], shard_count: int, lb: int, *, strategy_name: str, cut_cost: CutCost, max_items: int | None
) -> Bins | None:
    """Tests packed one by one (what granularity ``test`` does), parts of a file in one shard
    merged, each part beyond a file's first charged ``cut_cost``; None when ``max_items`` refuses."""
    atoms = [make_piece(unit.unit, [atom]) for unit in units for atom in unit.atoms]
    try:
        bins = _merge_same_shard(STRATEGIES[strategy_name].assign(atoms, shard_count, lb, max_items))
    except UsageError:
        return None
    if cut_cost:
        first = {unit.unit: unit.key for unit in units}
        bins = [
            [p if p.key == first[p.unit] else make_piece(p.unit, p.atoms, cut_cost.of(p.unit)) for p in b] for b in bins
        ]
    return bins


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
    unknown_factors: Mapping[str, float] | None = None,
    workers: int = 1,
    collection: Mapping[str, float] | None = None,
    untimed: bool = False,
) -> Plan:
    """The plan for ``items`` in ``shards`` shards (``created_at`` left to the caller); ``unknown_factors`` scale
    untimed items' estimates (``estimates.estimate``). With ``workers`` above 1 a shard is K pytest-xdist workers
    (plan/workers.py). ``collection``: each test file's learned collection seconds (``collection_lumps``).
    ``untimed``: no item has a timing, so ``auto`` deals each file's classes and functions (``deal_scopes``)."""
    ordered = sorted(set(items))
    _check_request(len(ordered), shards, strategy, max_items_per_shard)
    est, lumps, seconds = _priced(ordered, durations, unknown_factors, weights or {}, collection or {})
    atoms = build_atoms(ordered, keep_together, seconds)
    _check_groups_fit(atoms, max_items_per_shard)
    lb = lower_bound([a.cost for a in atoms], shards)
    bins = _bins(
        atoms,
        shards,
        lb,
        granularity=granularity,
        strategy=strategy,
        cost=_micro_cost(cut_cost),
        max_items=max_items_per_shard,
        lumps=lumps,
        workers=workers,
        dealt=untimed and granularity is Granularity.AUTO,
    )
    shard_plans = _shard_plans(bins, workers, lumps)
    shards_of = shards_per_file(shard_plans)
    all_notes = [
        *notes,
        *_workers_note(workers, shard_plans),
        *((est.note,) if est.note else ()),
        *(f"keep-together rule {rule!r} matches no item (a typo?)" for rule in unmatched_rules(ordered, keep_together)),
        *filter(None, (_empty_note(bins, shards, atoms, granularity), _cut_note(shards_of, granularity, untimed))),
    ]
    return Plan(
        total=shards,
        granularity=granularity,
        shards=shard_plans,
        lower_bound_seconds=_lower_bound_seconds(lb, [a.cost for a in atoms], shards, workers),
        unknown_items=est.unknown,
        files_cut=sum(1 for n in shards_of.values() if n > 1),
        notes=tuple(all_notes),
        unowned_shard=pick_unowned_shard(shard_plans),
        workers=workers,
    )


def _priced(
    ordered: Sequence[str],
    durations: Mapping[str, float],
    unknown_factors: Mapping[str, float] | None,
    weights: Mapping[str, float],
    collection: Mapping[str, float],
) -> tuple[Estimates, Lumps, dict[str, float]]:
    """The estimates, each file's collection lump, and the seconds packed: weighed, with the lumps."""
    est = estimate(ordered, durations, unknown_factors)
    lumps = collection_lumps(ordered, collection)
    return est, lumps, with_lumps(apply_weights(est.seconds, weights), lumps)


def _shard_plans(bins: Bins, workers: int, lumps: Lumps) -> tuple[ShardPlan, ...]:
    """The packed shards, each with its estimate: its costs' sum, or with collection lumps what ``bin_seconds``
    models; with K workers also the files spread over them (``best_spread``)."""
    plans = []
    for i, b in enumerate(bins):
        items = tuple(sorted(item for p in b for a in p.atoms for item in a.items))
        if workers > 1:
            spread, seconds = best_spread(b, workers, lumps)
        else:
            spread, seconds = (
                frozenset(),
                sum(p.cost for p in b) / MICRO if not lumps else bin_seconds(b, 1, lumps=lumps),
            )
        joined = joined_files(b) if workers > 1 else ()
        plan = ShardPlan(
            index=i + 1, items=items, estimated_seconds=seconds, spread=tuple(sorted(spread)), joined=joined
        )
        plans.append(plan)
    return tuple(plans)


def collection_lumps(ordered: Sequence[str], collection: Mapping[str, float]) -> Lumps:
    """Test file → (its first item, its collection seconds): a file's collection is part of its first item's
    estimate, so packing, which balances sums, pays it once per file; the shard estimates pay it once per
    shard holding part of the file, before the workers start (plan/workers.py ``bin_seconds``)."""
    if not collection:
        return {}
    lumps: dict[str, tuple[str, float]] = {}
    for item in ordered:  # sorted: a file's first item comes first
        file = item_file(item)
        if file not in lumps and collection.get(file, 0.0) > 0:
            # in whole microseconds, as the packed costs are: taken back out of a cost (``piece_files``), a
            # lump of 1.4453125 s left 0.9999995 s of a 1 s test, and xdist's order, which a tie decides,
            # put 2 s more on a worker
            lumps[file] = (item, round(collection[file] * MICRO) / MICRO)
    return lumps


def with_lumps(seconds: Mapping[str, float], lumps: Lumps) -> dict[str, float]:
    """``seconds`` with each file's collection added to its first item."""
    return {**seconds, **{item: seconds[item] + extra for item, extra in lumps.values()}}


def _workers_note(workers: int, shard_plans: Sequence[ShardPlan]) -> tuple[str, ...]:
    """What a plan for K workers per shard says about its estimates, and which files it spreads over them
    (nothing for one worker)."""
    if workers <= 1:
        return ()
    note = f"each shard is planned as {workers} pytest-xdist workers (--dist loadfile): its estimate is their makespan"
    spread = [f"{file} (shard {shard.index})" for shard in shard_plans for file in shard.spread]
    if not spread:
        return (note,)
    listed = ", ".join(spread[:CUT_NOTE_FILES]) + (
        f" and {len(spread) - CUT_NOTE_FILES} more" if len(spread) > CUT_NOTE_FILES else ""
    )
    return (note, f"{plural(len(spread), 'file')} run by class and function on every worker of its shard: {listed}")


def _empty_note(bins: Bins, shards: int, atoms: Sequence[Atom], granularity: Granularity) -> str:
    """Why some shards are empty: fewer items (files at file granularity) than shards ("" when none is)."""
    empty = [i + 1 for i, b in enumerate(bins) if not b]
    if not empty:
        return ""
    unit = "file" if granularity is Granularity.FILE else "item"
    available = len(build_units(atoms)) if granularity is Granularity.FILE else len(atoms)
    return (
        f"{len(empty)} of {shards} shards are empty ({_ranges(empty)}): only {plural(available, unit)} to share;"
        " an empty shard passes as 'empty'"
    )


def _check_groups_fit(atoms: Sequence[Atom], max_items_per_shard: int | None) -> None:
    """A keep-together group larger than ``--max-items-per-shard`` can go in no shard."""
    if max_items_per_shard is None:
        return
    big = next((a for a in atoms if len(a.items) > max_items_per_shard), None)
    if big is not None:
        msg = f"keep-together group of {big.key!r} has {len(big.items)} items, over --max-items-per-shard"
        raise UsageError(msg)


def _check_request(items: int, shards: int, strategy: str, max_items_per_shard: int | None) -> None:
    """The usage errors a plan request can have before anything is estimated, in the order they are told."""
    if shards < 1:
        msg = f"--shards must be at least 1, not {shards}"
        raise UsageError(msg)
    if strategy not in STRATEGIES:
        msg = f"unknown strategy {strategy!r} (choose from {', '.join(sorted(STRATEGIES))})"
        raise UsageError(msg)
    if max_items_per_shard is not None and items > shards * max_items_per_shard:
        msg = (
            f"{items} items do not fit into {shards} shards of at most {max_items_per_shard}"
            f" (--max-items-per-shard); use at least {math.ceil(items / max_items_per_shard)} shards"
        )
        raise UsageError(msg)


def _bins(
    atoms: Sequence[Atom],
    shards: int,
    lb: int,
    *,
    granularity: Granularity,
    strategy: str,
    cost: int,
    max_items: int | None,
    lumps: Lumps,
    workers: int,
    dealt: bool = False,
) -> Bins:
    """The atoms packed into ``shards`` bins at the plan's granularity (``cost``: the micro cost of a cut, to
    which each cut part adds its files' collection, ``lumps``), then moved between shards for K ``workers``;
    ``dealt``: each top-level class whole, each other test apart (``deal_scopes``)."""
    if dealt:
        bins = STRATEGIES[strategy].assign(deal_scopes(atoms), shards, lb, max_items)
    elif granularity is Granularity.TEST:
        bins = STRATEGIES[strategy].assign([make_piece(n, [a]) for n, a in enumerate(atoms)], shards, lb, max_items)
    elif granularity is Granularity.FILE:
        units = build_units(atoms)
        too_big = next((u for u in units if max_items is not None and u.size > max_items), None)
        if too_big is not None:
            msg = (
                f"{item_file(too_big.key)} has {too_big.size} items, more than --max-items-per-shard"
                f" {max_items} allows in one shard; use --granularity auto or test"
            )
            raise UsageError(msg)
        bins = STRATEGIES[strategy].assign(units, shards, lb, max_items)
    else:
        units = build_units(atoms)
        cut_cost = CutCost(cost, _collection_by_unit(units, lumps))
        bins = _pack_auto(units, shards, lb, strategy_name=strategy, cut_cost=cut_cost, max_items=max_items)
    if granularity is not Granularity.FILE:
        bins = _fill_empty(bins)
    bins = _merge_same_shard(bins)
    return improve_for_workers(bins, workers, max_items, lumps=lumps) if workers > 1 else bins


def deal_scopes(atoms: Sequence[Atom]) -> list[Piece]:
    """Each top-level test class (its methods and nested classes) as one piece, each other test as its own: a
    collected case of a module-level function, or under discovery the function with all its cases (the text
    does not give case ids); a keep-together group whole.

    A plan with no timings knows a file's tests only by their count, and real suites' files differ in cost
    per test by 10-400 times (pint 0.25.3: three files hold 318 of 2,338 tests and 40 % of the time; parso
    0.8.7: a file of 9 tests holds 4.3 s of 6), so a file kept whole, small or big, puts its unknown cost in
    one shard. Packed longest first with ties in id order, a file's pieces of equal count go round the
    shards: each shard gets its share of every file, and a costly file is every shard's
    (docs/planning.md#the-first-plan-every-file-dealt). A class stays whole, as pytest-xdist's ``loadscope``
    keeps it: its methods may share state in the order they run (pint's ``TestIssues`` sets its registry's
    options in one test for the next), and its class fixtures are set up once. The price is each file's
    collection and module setup once more in every shard it is dealt to (networkx 3.6.1: about 11 % more
    CPU); the next plan, from this run's timings, keeps files whole where balance allows."""
    groups: dict[str, list[Atom]] = {}
    for atom in atoms:
        groups.setdefault(spread_scope(atom.key) if atom.key.count("::") >= 2 else atom.key, []).append(atom)
    return [make_piece(n, members) for n, members in enumerate(groups.values())]


def _dealt_note(dealt: int) -> str:
    """Why a first plan cut ``dealt`` files: each is dealt over the shards."""
    return (
        "no test has a timing yet: each file's test classes and functions dealt over the shards"
        f" ({plural(dealt, 'file')} in more than one), so a file that costs more than its count of tests is shared,"
        " not one shard's; --granularity file keeps files whole"
    )


def _collection_by_unit(units: Sequence[Piece], lumps: Lumps) -> dict[int, int]:
    """Unit → the microseconds a cut part of it pays again: its costliest file's collection (a part holds one
    file, but for a keep-together group spanning files)."""
    if not lumps:
        return {}
    by_unit: dict[int, int] = {}
    for unit in units:
        seconds = max((lumps[f][1] for f in {item_file(a.key) for a in unit.atoms} if f in lumps), default=0.0)
        if seconds > 0:
            by_unit[unit.unit] = round(seconds * MICRO)
    return by_unit


def _lower_bound_seconds(lb: int, costs: Sequence[int], shards: int, workers: int) -> float:
    return lb / MICRO if workers <= 1 else worker_lower_bound(costs, shards, workers)


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
    return sum(1 for n in shards_per_file(shards).values() if n > 1)


def _cut_note(spread: Mapping[str, int], granularity: Granularity, untimed: bool = False) -> str | None:
    """Which files were cut (the biggest spreads first, at most ``CUT_NOTE_FILES``): their module
    and class setup runs once in every shard they are in; with no timings, why every file was."""
    if granularity is not Granularity.AUTO:
        return None
    cut = sorted(((-n, f) for f, n in spread.items() if n > 1))
    if untimed:
        return _dealt_note(len(cut))
    if not cut:
        return None
    listed = ", ".join(f"{f} ({-n} shards)" for n, f in cut[:CUT_NOTE_FILES])
    more = f" and {len(cut) - CUT_NOTE_FILES} more" if len(cut) > CUT_NOTE_FILES else ""
    return f"{plural(len(cut), 'file')} cut to balance, each setting up once per shard it is in: {listed}{more}"


def fragmentation(plan: Plan) -> float:
    """(file, shard) pairs per file: 1.0 means no file was cut."""
    pairs = sum(len({item_file(i) for i in shard.items}) for shard in plan.shards)
    files = len({item_file(i) for i in plan.items})
    return pairs / files if files else 1.0
