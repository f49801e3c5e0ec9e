"""Per-shard fixed overhead, learned from runs: what a shard spends outside its tests. Pure.

A shard's overhead is its wall time minus the time its tests report (their re-runs included):
interpreter start-up, collecting its files, session fixtures, writing reports. The planner cannot
balance it away — every shard with work pays it — so it belongs in every shard's estimate and in
``--shards auto``'s choice of N (a 15-second suite is not worth four shards of 10-second start-up).

Only shards that ran their tests to the end count: ``passed`` or ``failed`` with their results
matched to the plan. A timed-out, cancelled or unreadable shard's wall says nothing about the
fixed cost. One run contributes one sample, the median over its shards (one shard with a slow
session fixture does not move it); the store keeps the last runs and estimates with their median.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Final

from ci_shards.model import ShardStatus
from ci_shards.report.verdict import ShardResult

RAN_TO_THE_END: Final = frozenset({ShardStatus.PASSED, ShardStatus.FAILED})


def shard_overheads(shards: Iterable[ShardResult]) -> dict[int, float]:
    """Shard index → seconds of its wall time not spent in its tests (never negative), for the
    shards whose wall time means something (see the module docstring)."""
    result: dict[int, float] = {}
    for shard in shards:
        if shard.status not in RAN_TO_THE_END or not shard.verified or not shard.cases or shard.elapsed_seconds <= 0:
            continue
        in_tests = sum(c.time + sum(a.time for a in c.attempts) for c in shard.cases)
        result[shard.index] = max(0.0, shard.elapsed_seconds - in_tests)
    return result


def run_overhead(overheads: Mapping[int, float]) -> float | None:
    """This run's one sample: the median over its shards, None when no shard counted."""
    return float(statistics.median(overheads.values())) if overheads else None
