"""plan/workers.py: a shard as K pytest-xdist workers (the makespan of xdist's load-scope scheduling)."""

from __future__ import annotations

import functools
import heapq
import json
from collections import deque
from collections.abc import Sequence
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.model.plan import Plan
from ci_shards.plan import workers as workers_module
from ci_shards.plan.packing import Atom, Piece, make_piece
from ci_shards.plan.planner import plan_items
from ci_shards.plan.units import MICRO
from ci_shards.plan.workers import (
    LOW_WATERMARK,
    Lumps,
    PieceFiles,
    best_spread,
    bin_seconds,
    collection_key,
    improve_for_workers,
    overhead_variant,
    piece_files,
    shard_seconds,
    work_floor,
    work_units,
    xdist_makespan,
)
from ci_shards.run.xdist_hooks import spread_scope


def test_one_worker_is_the_sum() -> None:
    assert xdist_makespan([[1.0, 2.0], [3.0]], 1) == 6.0
    assert shard_seconds(["a.py::x", "b.py::y"], {"a.py::x": 1.5, "b.py::y": 2.0}, 1) == 3.5


def test_files_go_whole_to_a_worker() -> None:
    # one file of 10 s and four of 1 s over 2 workers: the big one alone, the rest on the other
    units = [[5.0, 5.0, 0.0], [1.0], [1.0], [1.0], [1.0]]
    assert xdist_makespan(units, 2) == 10.0
    # a file cannot be shared: two files of 6 s and one of 6 s over 2 workers is 12 s, not 9 s
    assert xdist_makespan([[3.0, 3.0, 0.0], [3.0, 3.0, 0.0], [3.0, 3.0, 0.0]], 2) == 12.0


def test_a_worker_with_two_tests_pending_takes_the_next_file_at_once() -> None:
    # the queue: files by test count, most first (equal counts keep collection order)
    seconds = {"a.py::t1": 1.0, "a.py::t2": 1.0, "a.py::t3": 1.0, "a.py::t4": 1.0, "b.py::t": 9.0, "c.py::t": 1.0}
    units = work_units(list(seconds), seconds)
    assert units == [[1.0, 1.0, 1.0, 1.0], [9.0], [1.0]]
    # worker 0 takes a.py (4 tests pending), worker 1 b.py; then xdist's "at least two work units" rule
    # gives worker 1 (1 test pending) c.py as well, behind its 9 s test: 10 s, where greedy list
    # scheduling of whole files would say 9 s (worker 0 free at 4 s taking c.py)
    assert xdist_makespan(units, 2) == 10.0
    # with more tests in the first files nobody prefetches: greedy list scheduling
    assert xdist_makespan([[3.0, 3.0, 3.0], [1.0, 1.0, 1.0], [1.0]], 2) == 9.0


def test_more_workers_than_files_idle() -> None:
    assert xdist_makespan([[2.0], [3.0]], 8) == 3.0
    assert xdist_makespan([], 4) == 0.0


def test_collection_order_puts_a_folder_before_a_file_of_its_name() -> None:
    assert sorted(["a.py", "a/x.py", "a_b.py"], key=collection_key) == ["a/x.py", "a.py", "a_b.py"]


def test_overhead_is_learned_per_k() -> None:
    assert overhead_variant(None, 1) is None
    assert overhead_variant("py3.12", 1) == "py3.12"
    assert overhead_variant(None, 2) == "@workers=2"
    assert overhead_variant("py3.12", 4) == "py3.12@workers=4"


def test_a_plan_for_k_workers_estimates_each_shard_as_their_makespan() -> None:
    durations = {f"t{n}.py::test": 4.0 for n in range(4)} | {f"big.py::test_{n}": 1.0 for n in range(8)}
    one = plan_items(durations, durations, 2)
    two = plan_items(durations, durations, 2, workers=2)
    assert one.workers == 1
    assert "workers" not in one.content()  # a plan without workers keeps its bytes and digest
    assert two.workers == 2
    assert two.content()["workers"] == 2
    for shard in two.shards:
        assert shard.estimated_seconds == pytest.approx(shard_seconds(shard.items, durations, 2))
    assert two.estimated_makespan <= 8.0 + 1e-9  # 24 s of work over 2 x 2 workers, in files of 4 and 8 s
    assert sorted(two.items) == sorted(durations)


def test_moves_lower_the_slowest_k_worker_shard() -> None:
    # balanced sums (11 s each, f1 cut across the shards) hide unequal makespans over 2 workers: a shard
    # of two long files is as slow as its longer one plus what is queued behind it; the planner moves
    # files until the slowest K-worker shard drops
    durations = {"f0.py::t0": 3.0, "f1.py::t0": 4.0, "f1.py::t1": 8.0, "f2.py::t0": 1.0, "f3.py::t0": 6.0}
    by_sum = plan_items(durations, durations, 2)
    assert max(shard_seconds(s.items, durations, 2) for s in by_sum.shards) == 10.0
    plan = plan_items(durations, durations, 2, workers=2)
    assert plan.estimated_makespan == pytest.approx(max(shard_seconds(s.items, durations, 2) for s in plan.shards))
    assert plan.estimated_makespan == 8.0


def test_a_shard_slow_by_a_lump_no_move_helps_trades_it_for_shorter_pieces() -> None:
    # pint 0.25 under --workers 2 (docs/benchmarks.md, session 21): a shard of two long files at an even sum is
    # slowest by its lump, xdist's test-count order putting both long classes of r.py on one worker, and any
    # other shard that took either file whole would end slower still; traded for ten 0.5 s files, r.py
    # spreads well among them in the other shard
    def piece(unit: int, tests: dict[str, float]) -> Piece:
        return make_piece(unit, [Atom(t, (t,), round(s * MICRO)) for t, s in sorted(tests.items())])

    r_py = {f"r.py::TestOne::t{i:02}": 0.25 for i in range(10)} | {f"r.py::TestTwo::t{i:02}": 0.25 for i in range(10)}
    r_py |= {f"r.py::TestThree::t{i:02}": 0.005 for i in range(20)}
    lumpy = [piece(0, r_py), piece(1, {f"q.py::TestQ::t{i:02}": 0.075 for i in range(40)})]
    small = [piece(2 + n, {f"s{n:02}.py::test": 0.5}) for n in range(16)]
    assert [best_spread(b, 2, {})[1] for b in (lumpy, small)] == pytest.approx([5.1, 4.0])
    improved = improve_for_workers([lumpy, small], 2, None)
    assert sorted(p.key for b in improved for p in b) == sorted(p.key for p in [*lumpy, *small])
    assert max(best_spread(b, 2, {})[1] for b in improved) == pytest.approx(4.1)


def _one_event_per_test(units: list[list[float]], workers: int) -> float:
    """xdist's load-scope scheduling replayed test by test, as plan/workers.py did before it summed the
    finishes that cannot take a unit: the reference its faster replay must equal, float for float."""
    if workers <= 1 or len(units) <= 1:
        return float(sum(sum(u) for u in units))
    queue = deque(units)
    pending: list[deque[float]] = [deque() for _ in range(min(workers, len(units)))]
    for tests in pending:
        tests.extend(queue.popleft())
    for tests in pending:
        if queue and len(tests) <= LOW_WATERMARK:
            tests.extend(queue.popleft())
    events = [(tests[0], index) for index, tests in enumerate(pending) if tests]
    heapq.heapify(events)
    finished = 0.0
    while events:
        now, index = heapq.heappop(events)
        tests = pending[index]
        tests.popleft()
        finished = max(finished, now)
        if queue and len(tests) <= LOW_WATERMARK:
            tests.extend(queue.popleft())
        if tests:
            heapq.heappush(events, (now + tests[0], index))
    return finished


@settings(max_examples=300, deadline=None)
@given(
    units=st.lists(
        st.lists(st.floats(min_value=0.0, max_value=50.0, allow_nan=False), min_size=1, max_size=9), max_size=14
    ),
    workers=st.integers(min_value=1, max_value=5),
)
def test_the_makespan_equals_a_replay_of_every_test(units: list[list[float]], workers: int) -> None:
    assert xdist_makespan(units, workers) == _one_event_per_test(units, workers)


def test_a_spread_files_units_are_its_classes_and_functions_with_their_cases() -> None:
    assert spread_scope("t.py::TestA::test_x[1]") == "t.py::TestA"
    assert spread_scope("t.py::TestA::TestInner::test_x") == "t.py::TestA"  # nested classes stay with theirs
    assert spread_scope("t.py::test_x[1-2]") == spread_scope("t.py::test_x[3]") == "t.py::test_x"
    assert spread_scope("t.py") == "t.py"
    items = ["t.py::TestA::a", "t.py::TestA::b", "t.py::test_c[1]", "t.py::test_c[2]", "u.py::t"]
    seconds = dict.fromkeys(items, 1.0)
    assert sorted(work_units(items, seconds)) == [[1.0], [1.0] * 4]
    assert sorted(work_units(items, seconds, frozenset({"t.py"}))) == [[1.0], [1.0, 1.0], [1.0, 1.0]]


def test_a_file_that_outweighs_a_workers_share_is_spread_over_the_workers() -> None:
    # pint 0.25's shape: one file holds 16 of a shard's 17.5 s; whole, one worker runs it while the other idles
    big = {f"big.py::Test{c}::test_{n}": 1.0 for c in "ABCD" for n in range(4)}
    small = {f"s{n}.py::test": 0.5 for n in range(3)}
    durations = big | small
    plan = plan_items(durations, durations, 1, workers=2)
    (shard,) = plan.shards
    assert shard.spread == ("big.py",)
    assert "1 file run by class and function on every worker of its shard: big.py (shard 1)" in plan.notes
    assert shard.estimated_seconds == pytest.approx(9.0)  # 17.5 s of work over 2 workers, in units of 4 s and 0.5 s
    assert shard_seconds(shard.items, durations, 2) == pytest.approx(16.0)  # what the file kept whole would take
    assert plan_items(durations, durations, 1).shards[0].spread == ()  # one worker: nothing to spread over
    again = Plan.from_json(json.loads(plan.dumps()))
    assert again == plan
    assert again.digest == plan.digest
    plain = plan_items(small, small, 1, workers=2)
    assert "spread" not in plain.content()["shards"][0]  # other plans keep their bytes and digest


def test_a_file_a_rule_keeps_together_is_never_spread_but_a_class_rule_leaves_it_free() -> None:
    # the same shape as above, its file kept whole by a rule (pytest-dependency's marks make front.py add one):
    # spread, a dependent test ran on one worker and its dependency on the other, and was skipped
    big = {f"big.py::Test{c}::test_{n}": 1.0 for c in "ABCD" for n in range(4)}
    durations = big | {f"s{n}.py::test": 0.5 for n in range(3)}
    (kept,) = plan_items(durations, durations, 1, workers=2, keep_together=["big.py"]).shards
    assert kept.spread == ()
    assert kept.estimated_seconds == pytest.approx(16.0)  # what it costs kept on one worker, said as it is
    (classes,) = plan_items(durations, durations, 1, workers=2, keep_together=["class"]).shards
    assert classes.spread == ("big.py",)  # each class is one spread unit: the rule still holds


def test_files_a_rule_joins_are_one_work_unit_recorded_in_the_plan() -> None:
    # --keep-together tests/test_db_* (the remedy the plan names for pytest-dependency's scope 'session'): one
    # shard holds both files, and with K workers one worker too, in pytest's order, as one pytest process would
    durations = {
        **{f"tests/test_db_{n}.py::test_{m}": 1.0 for n in (2, 1) for m in range(2)},
        **{f"tests/test_x{n}.py::test": 1.0 for n in range(4)},
    }
    plan = plan_items(durations, durations, 1, workers=2, keep_together=["tests/test_db_*"])
    (shard,) = plan.shards
    assert shard.joined == (("tests/test_db_1.py", "tests/test_db_2.py"),)
    assert shard.spread == ()  # a joined file is never spread either
    # the estimate models the group as one unit (as aggregate's overhead fit does): longer than the same files
    # each a unit of their own
    assert shard.estimated_seconds == pytest.approx(shard_seconds(shard.items, durations, 2, joined=shard.joined))
    assert shard.estimated_seconds > shard_seconds(shard.items, durations, 2)
    assert plan.content()["shards"][0]["joined"] == [["tests/test_db_1.py", "tests/test_db_2.py"]]
    assert Plan.from_json(json.loads(plan.dumps())) == plan
    (one,) = plan_items(durations, durations, 1, keep_together=["tests/test_db_*"]).shards
    assert one.joined == ()  # one worker: nothing to join
    assert "joined" not in plan_items(durations, durations, 1, workers=2).content()["shards"][0]


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([f"f{f}.py::{c}::t{n}" for f in range(3) for c in ("TestA", "TestB") for n in range(3)]),
        st.floats(0.01, 10),
        min_size=1,
    ),
    st.integers(1, 3),
    st.integers(2, 4),
)
def test_spreading_never_lengthens_a_shard_and_is_what_the_estimate_models(seconds, shards, workers) -> None:
    plan = plan_items(seconds, seconds, shards, workers=workers)
    for shard in plan.shards:
        modelled = shard_seconds(shard.items, seconds, workers, frozenset(shard.spread))
        assert shard.estimated_seconds == pytest.approx(modelled, abs=1e-4)
        assert modelled <= shard_seconds(shard.items, seconds, workers) + 1e-4
        assert set(shard.spread) <= {item.split("::")[0] for item in shard.items}


_CLASS_TEST_IDS = [f"f{f}.py::{c}::t{n}" for f in range(6) for c in ("TestA", "TestB", "TestC") for n in range(4)]


def _lumps(tests: Sequence[str], collection: dict[str, float]) -> tuple[Lumps, PieceFiles]:
    """Each held file's collection on its first test, as planner.collection_lumps puts it, and ``piece_files``
    reading them."""
    held = {t.split("::")[0] for t in tests} & collection.keys()
    lumps = {f: (min(t for t in tests if t.startswith(f)), collection[f]) for f in held}
    return lumps, functools.partial(piece_files, lumps=lumps)


@settings(max_examples=80, deadline=None)
@given(
    seconds=st.dictionaries(st.sampled_from(_CLASS_TEST_IDS), st.floats(0.01, 10), min_size=8),
    shards=st.integers(2, 4),
    workers=st.integers(2, 4),
    collection=st.dictionaries(st.sampled_from([f"f{f}.py" for f in range(6)]), st.floats(0.0, 3.0)),
)
def test_the_floors_that_skip_pricing_change_no_plan(
    seconds: dict[str, float], shards: int, workers: int, collection: dict[str, float]
) -> None:
    # a plan job skips the makespans a floor shows cannot win (plan/workers.work_floor): each floor must sit
    # under what it stands for, and with the floors at zero (every candidate priced) the plan is the same
    plan = plan_items(seconds, seconds, shards, workers=workers, collection=collection)
    for shard in plan.shards:
        pieces = [make_piece(0, [Atom(item, (item,), round(seconds[item] * MICRO))]) for item in shard.items]
        lumps, files_of = _lumps(shard.items, collection)
        assert work_floor(pieces, workers, files_of, lumps) <= bin_seconds(pieces, workers, files_of, lumps=lumps)
    with mock.patch.object(workers_module, "work_floor", lambda *_args: 0.0):
        unpruned = plan_items(seconds, seconds, shards, workers=workers, collection=collection)
    assert plan == unpruned


@settings(max_examples=150, deadline=None)
@given(
    tests=st.lists(st.tuples(st.sampled_from(_CLASS_TEST_IDS), st.floats(0.0, 10), st.booleans()), min_size=1),
    workers=st.integers(2, 4),
    collection=st.dictionaries(st.sampled_from([f"f{f}.py" for f in range(6)]), st.floats(0.0, 3.0)),
)
def test_no_trade_between_two_shards_ends_both_under_half_their_floor(
    tests: list[tuple[str, float, bool]], workers: int, collection: dict[str, float]
) -> None:
    # what lets a plan job skip a pair of shards (_Shards._pair_floor): however their pieces are split
    # between them, the longer one takes at least half of the pair's work_floor
    pieces = [make_piece(0, [Atom(t, (t,), round(s * MICRO))]) for t, s, _ in tests]
    lumps, files_of = _lumps([t for t, _, _ in tests], collection)
    left = [p for p, (_, _, side) in zip(pieces, tests, strict=True) if side]
    right = [p for p, (_, _, side) in zip(pieces, tests, strict=True) if not side]
    longer = max(bin_seconds(side, workers, files_of, lumps=lumps) for side in (left, right))
    assert work_floor(pieces, workers, files_of, lumps) / 2 <= longer + 1e-6
