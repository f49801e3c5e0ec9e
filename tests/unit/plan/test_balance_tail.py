"""No balance tail: granularity auto is never more than 2 % slower than packing single tests.

Generated and adversarial instances (few large tests, more shards than large tests, one dominant
file, many equal tests, heavy-tailed durations) — the shapes where keeping files whole used to
leave one shard well above what cutting at test boundaries reaches."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.model.plan import Granularity
from ci_shards.plan.packing import Atom, CutCost, make_piece
from ci_shards.plan.planner import plan_items
from ci_shards.plan.shave import shave

TAIL: float = 1.02  # the promise (issue 10); the planner aims at 1 %


def _duration(draw: st.DrawFn, kind: str, file: int, n: int, large: set[int]) -> float:
    if kind == "equal":
        return 5.0
    if kind == "dominant":
        return draw(st.floats(10.0, 40.0)) if file == 0 else draw(st.floats(0.0, 1.0))
    if kind == "heavy":
        return min(3600.0, draw(st.floats(1.0, 2.0)) ** draw(st.integers(0, 14)))
    if kind in {"few-large", "shards-over-large"}:
        return draw(st.floats(20.0, 40.0)) if n in large else draw(st.floats(0.0, 2.0))
    return draw(st.floats(0.0, 40.0))


@st.composite
def instances(draw: st.DrawFn) -> tuple[dict[str, float], int]:
    kind = draw(st.sampled_from(["few-large", "shards-over-large", "dominant", "equal", "heavy", "mixed"]))
    files = draw(st.integers(1, 12))
    count = draw(st.integers(1, 120))
    shards = draw(st.integers(1, 24))
    large_count = draw(st.integers(1, max(1, shards - 1))) if kind == "shards-over-large" else draw(st.integers(1, 12))
    large = set(draw(st.lists(st.integers(0, count - 1), min_size=0, max_size=large_count, unique=True)))
    durations = {}
    for n in range(count):
        file = draw(st.integers(0, files - 1))
        durations[f"tests/test_{file}.py::test_{n}"] = round(_duration(draw, kind, file, n, large), 3)
    return durations, shards


# the fast run's sample; the full one is the slow-marked `_thorough` twin below (tests/README.md, "Property tests")
@settings(max_examples=40, deadline=None)
@given(instances(), st.randoms(use_true_random=False))
def test_auto_within_two_percent_of_test_granularity_every_item_once_same_bytes(instance, rnd):
    durations, shards = instance
    auto = plan_items(durations, durations, shards)
    test = plan_items(durations, durations, shards, granularity=Granularity.TEST)
    assert auto.estimated_makespan <= TAIL * test.estimated_makespan
    assert sorted(auto.items) == sorted(durations)
    assert len(auto.items) == len(set(auto.items))
    shuffled = list(durations)
    rnd.shuffle(shuffled)
    reordered = {item: durations[item] for item in shuffled}
    assert plan_items(shuffled, reordered, shards).dumps() == auto.dumps()


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(instances(), st.randoms(use_true_random=False))
def test_auto_within_two_percent_of_test_granularity_every_item_once_same_bytes_thorough(instance, rnd):
    test_auto_within_two_percent_of_test_granularity_every_item_once_same_bytes.hypothesis.inner_test(instance, rnd)


def test_171_tests_of_20_to_40_seconds_in_three_files_at_16_shards():
    """The shape of the issue's real case: it used to plan at 1.66 times test granularity's makespan."""
    rnd = random.Random(32)
    durations = {}
    for n in range(171):
        file = rnd.randrange(3)
        seconds = rnd.uniform(20, 40) if rnd.random() < 0.3 else rnd.uniform(0.1, 3)
        durations[f"tests/test_m{file}.py::test_{n:03d}"] = round(seconds, 2)
    auto = plan_items(durations, durations, 16)
    test = plan_items(durations, durations, 16, granularity=Granularity.TEST)
    assert auto.estimated_makespan <= 1.01 * test.estimated_makespan
    assert auto.files_cut <= 3


def _atom(name: str, seconds: int) -> Atom:
    return Atom(name, (name,), seconds)


def test_shave_moves_a_test_next_to_its_file_before_opening_a_new_part():
    a1, a2, a3 = _atom("a.py::1", 30), _atom("a.py::2", 30), _atom("a.py::3", 10)
    b1 = _atom("b.py::1", 40)
    c1 = _atom("c.py::1", 45)
    bins = [
        [make_piece(0, [a1, a2, a3])],
        [make_piece(0, [_atom("a.py::4", 5)]), make_piece(1, [b1])],
        [make_piece(2, [c1])],
    ]
    shaved = shave(bins, 60, CutCost(), None)
    assert shaved is not None
    assert [sorted(a.key for p in b for a in p.atoms) for b in shaved] == [
        ["a.py::1", "a.py::2"],
        ["a.py::3", "a.py::4", "b.py::1"],
        ["c.py::1"],
    ]
    assert bins[0][0].size == 3  # the input is left alone


def test_shave_gives_up_when_no_move_fits():
    bins = [[make_piece(0, [_atom("a.py::1", 50), _atom("a.py::2", 50)])], [make_piece(1, [_atom("b.py::1", 90)])]]
    assert shave(bins, 60, CutCost(), None) is None
    assert shave(bins, 100, CutCost(), None) == bins
