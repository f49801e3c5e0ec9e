"""Choosing the shard count for ``--shards auto``: the shortest critical path worth paying for. Pure.

The critical path of a sharded run is the plan job's own work, then the slowest shard: its tests
plus the fixed overhead every shard pays (start-up, collecting its files, session fixtures —
learned by aggregate into the timings store, or ``--shard-overhead``). The plan job's work is the
same for every N, so the choice compares slowest shard + overhead:

- the smallest N whose critical path fits ``--target-seconds`` (fewest machines that meet it);
- when no N does, the smallest N within ``PAYS_OFF`` (2 %) of the best reachable: more shards
  would each cost a machine and a start-up for almost nothing (the longest test bounds the path);
- never more shards than items, nor than ``MAX_SHARDS`` (GitHub's matrix limit), nor than
  ``--max-shards``.

The makespan falls (almost always) monotonically with N, so both searches gallop up from the
least N that could do and then bisect; every plan made is cached, and ties go to the smaller N.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from ci_shards.common.errors import UsageError
from ci_shards.model.plan import Plan
from ci_shards.plan.planner import plan_items

MAX_SHARDS: Final = 256  # GitHub's matrix limit (matrix.GITHUB_MATRIX_MAX)
PAYS_OFF: Final = 0.02  # a shard more must shorten the best critical path by more than this


@dataclass(frozen=True)
class AutoChoice:
    plan: Plan
    reason: str


class _Plans:
    """Plans by shard count, made once each; ``path(n)`` is slowest shard + overhead."""

    def __init__(self, items: list[str], durations: Mapping[str, float], overhead: float, options: object) -> None:
        self.items, self.durations, self.overhead, self.options = items, durations, overhead, options
        self.made: dict[int, Plan] = {}

    def __call__(self, n: int) -> Plan:
        if n not in self.made:
            self.made[n] = plan_items(self.items, self.durations, n, **self.options)  # type: ignore[arg-type]
        return self.made[n]

    def path(self, n: int) -> float:
        plan = self(n)
        return plan.estimated_makespan + (self.overhead if plan.items else 0.0)

    def first(self, lo: int, hi: int, good: float) -> int:
        """The smallest n in [lo, hi] with ``path(n) <= good`` (``hi`` when none is). Galloping up
        from ``lo`` first: the answer is usually at or just above it, and plans with many shards
        cost the most to make."""
        step, below = 1, lo - 1
        probe = lo
        while probe < hi and self.path(probe) > good:
            below, probe, step = probe, min(hi, probe + step), step * 2
        lo, hi = below + 1, probe
        while lo < hi:
            mid = (lo + hi) // 2
            if self.path(mid) <= good:
                hi = mid
            else:
                lo = mid + 1
        return lo


def choose_shards(
    items: Iterable[str],
    durations: Mapping[str, float],
    *,
    target_seconds: float,
    shard_overhead: float = 0.0,
    overhead_source: str = "",
    max_shards: int,
    **options: object,
) -> AutoChoice:
    """The plan with the chosen N (``shard_overhead_seconds`` set) and the reason in words;
    ``overhead_source`` says where the overhead came from (e.g. "learned from 5 runs")."""
    if not (math.isfinite(target_seconds) and target_seconds > 0):
        msg = f"--target-seconds must be a positive number, not {target_seconds!r}"
        raise UsageError(msg)
    if not (math.isfinite(shard_overhead) and shard_overhead >= 0):
        msg = f"--shard-overhead must be a non-negative number of seconds, not {shard_overhead!r}"
        raise UsageError(msg)
    ordered = sorted(set(items))
    max_items = options.get("max_items_per_shard")
    fewest = max(1, math.ceil(len(ordered) / max_items)) if isinstance(max_items, int) and max_items > 0 else 1
    if fewest > min(max_shards, MAX_SHARDS):
        limit = "--max-shards" if max_shards <= MAX_SHARDS else f"GitHub's matrix limit of {MAX_SHARDS}"
        msg = f"{len(ordered)} items need at least {fewest} shards of {max_items} (--max-items-per-shard) > {limit}"
        raise UsageError(msg)
    # never more shards than items; over GitHub's 256 only when --max-shards allows it, and then
    # `plan`/`matrix` refuse the choice with the limit named (exit 2) instead of quietly capping it
    cap = max(fewest, min(max_shards, len(ordered)))
    plans = _Plans(ordered, durations, shard_overhead, options)
    overhead = f"{shard_overhead:g} s overhead" + (f" ({overhead_source})" if overhead_source else "")

    def described(n: int) -> str:
        return f"slowest shard {plans(n).estimated_makespan:.1f} s + {overhead}"

    if plans.path(fewest) <= target_seconds or not ordered:
        why = f" (--max-items-per-shard {max_items})" if fewest > 1 else ""
        reason = f"{fewest} shard{'s' if fewest > 1 else ''}{why}: {described(fewest)} ≤ target {target_seconds:g} s"
        return _chosen(plans(fewest), reason, shard_overhead)
    total = sum(s.estimated_seconds for s in plans(fewest).shards)
    budget = target_seconds - shard_overhead
    low = max(fewest, min(cap, math.ceil(total / budget) if budget > 0 else cap))
    n = plans.first(low, cap, target_seconds)
    if plans.path(n) <= target_seconds:
        reason = f"{n} shards: {described(n)} = {plans.path(n):.1f} s ≤ target {target_seconds:g} s"
        if n > fewest:
            reason += f"; {n - 1} would take {plans.path(n - 1):.1f} s"
        return _chosen(plans(n), reason, shard_overhead)
    # the target is out of reach: the fewest shards within PAYS_OFF of the best path found
    best_n = min(plans.made, key=lambda k: (plans.path(k), k))
    best = plans.path(best_n)
    n = plans.first(fewest, best_n, best * (1 + PAYS_OFF))
    bounds = [f"--max-shards {max_shards}" if cap == max_shards else ""]
    bounds.append(f"only {len(ordered)} items" if cap == len(ordered) < max_shards else "")
    bounds.append(f"GitHub's limit of {MAX_SHARDS}" if cap == MAX_SHARDS < max_shards else "")
    within = ", ".join(b for b in bounds if b)
    reason = (
        f"{n} shards: the target {target_seconds:g} s is not reachable ({described(n)} = {plans.path(n):.1f} s;"
        f" lower bound {plans(n).lower_bound_seconds:.1f} s + overhead); the best found is {best:.1f} s"
        f" at {best_n} shards{f' ({within})' if within else ''}, and more than {n} shards would shorten it"
        f" by under {PAYS_OFF:.0%}"
        if n < best_n
        else f"{n} shards: the target {target_seconds:g} s is not reachable; {described(n)} = {plans.path(n):.1f} s"
        f" is the best found{f' ({within})' if within else ''} (lower bound {plans(n).lower_bound_seconds:.1f} s"
        " + overhead)"
    )
    return _chosen(plans(n), reason, shard_overhead)


def _chosen(plan: Plan, reason: str, overhead: float) -> AutoChoice:
    plan = dataclasses.replace(plan, notes=(reason, *plan.notes), shard_overhead_seconds=overhead)
    return AutoChoice(plan, reason)
