"""Per-shard fixed overhead, learned from runs: what a shard spends outside its tests. Pure.

A shard's overhead is its wall time minus the time its tests report (their re-runs included) and the
time pytest took to collect its test files (learned per file apart, since it follows the files):
interpreter start-up, conftest.py files, session fixtures, writing reports. The planner cannot
balance it away — every shard with work pays it — so it belongs in every shard's estimate and in
``--shards auto``'s choice of N (a 15-second suite is not worth four shards of 10-second start-up).

Only shards that ran their tests to the end count: ``passed`` or ``failed`` with their results
matched to the plan. A timed-out, cancelled or unreadable shard's wall says nothing about the
fixed cost. One run contributes one sample, the median over its shards (one shard with a slow
session fixture does not move it); the store keeps the last runs and estimates with their median.

Part of the overhead grows with the number of tests, not with their time: pytest's hooks, reports
and fixtures around each test, which the tests' own times leave out. A shard of 2,700 tiny tests
pays it 2,700 times, one of 600 tests 600 times, and a plan that balances the tests' times alone
makes the first one the slowest. From one run the per-test part is the slope of overhead over the
number of tests across its shards, estimated robustly (Theil-Sen: the median of the pairwise
slopes, ignoring pairs whose test counts differ by under ``MIN_SPREAD``), never below 0 and never
above all the overhead spread over all the tests; the fixed part is then the median of what each
shard's overhead leaves after it.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from itertools import combinations
from typing import Final

from ci_shards.plan.workers import shard_seconds
from ci_shards.report.verdict import RAN_TO_THE_END, ShardResult

MIN_SPREAD: Final = 0.1  # two shards' test counts must differ by 10 % of the larger for a slope
PROBE: Final = 0.001  # seconds added to every test to see how many of them a shard's makespan is made of


def shard_overheads(shards: Iterable[ShardResult], *, workers: int = 1) -> dict[int, float]:
    """Shard index → seconds of its wall time not spent in its tests (never negative), for the
    shards whose wall time means something (see the module docstring). With K pytest-xdist workers the
    tests' time is their makespan over K in xdist's order (plan/workers.py), so what is left is the
    shard's overhead with the workers' start-up: what a plan for K workers adds to every shard."""
    result: dict[int, float] = {}
    for shard in shards:
        if shard.status not in RAN_TO_THE_END or not shard.verified or not shard.cases or shard.elapsed_seconds <= 0:
            continue
        times = _test_seconds(shard)
        in_tests = shard_seconds(list(times), times, workers, shard.spread, shard.joined)
        # each test file's collection is learned apart (timings/store.py's collection), and a plan adds it
        # to the shards that hold the file: every xdist worker collects the shard's files before its first test
        collecting = sum(shard.collect_seconds.values())
        result[shard.index] = max(0.0, shard.elapsed_seconds - in_tests - collecting)
    return result


def _test_seconds(shard: ShardResult) -> dict[str, float]:
    """Each test's seconds in the shard, its failed attempts' included (they took wall time too)."""
    return {c.test_id: c.time + sum(a.time for a in c.attempts) for c in shard.cases}


def case_counts(shards: Iterable[ShardResult]) -> dict[int, int]:
    """Shard index → how many tests it reported (each costs pytest's per-test overhead)."""
    return {shard.index: len(shard.cases) for shard in shards}


def critical_path_tests(shards: Iterable[ShardResult], *, workers: int = 1) -> dict[int, float]:
    """Shard index → how many tests' overhead its wall time pays: each test's overhead lands on the worker
    that runs it, so with K pytest-xdist workers it is how much the makespan of its tests (xdist's order,
    plan/workers.py) grows when every test costs ``PROBE`` seconds more, over ``PROBE``. With one worker
    that is the test count; with K, about count/K over many files and the count over one. The slope fitted
    over it is then the same per-test seconds a one-worker run measures, which the planner adds to each
    test before the makespan (plan/front.py)."""
    if workers <= 1:
        return {index: float(count) for index, count in case_counts(shards).items()}
    result: dict[int, float] = {}
    for shard in shards:
        times = _test_seconds(shard)
        longer = {test: seconds + PROBE for test, seconds in times.items()}
        grown = shard_seconds(list(times), longer, workers, shard.spread, shard.joined) - shard_seconds(
            list(times), times, workers, shard.spread, shard.joined
        )
        result[shard.index] = max(0.0, grown) / PROBE  # a longer test can shorten a list schedule (Graham)
    return result


def per_test_overhead(overheads: Mapping[int, float], cases: Mapping[int, float]) -> float | None:
    """Seconds of overhead each test adds (see the module docstring), None when no two shards
    differ enough in their test counts to tell."""
    points = [(cases[index], seconds) for index, seconds in overheads.items() if cases.get(index, 0) > 0]
    slopes = [
        (o2 - o1) / (n2 - n1)
        for (n1, o1), (n2, o2) in combinations(points, 2)
        if abs(n2 - n1) >= MIN_SPREAD * max(n1, n2)
    ]
    if not slopes:
        return None
    ceiling = sum(o for _, o in points) / sum(n for n, _ in points)
    return min(max(0.0, float(statistics.median(slopes))), ceiling)


def run_overhead(
    overheads: Mapping[int, float], per_test: float = 0.0, cases: Mapping[int, float] | None = None
) -> float | None:
    """This run's one fixed-overhead sample: the median over its shards of what their overhead
    leaves after ``per_test`` seconds per test; None when no shard counted."""
    if not overheads:
        return None
    counts = cases or {}
    return float(statistics.median(max(0.0, o - per_test * counts.get(i, 0)) for i, o in overheads.items()))
