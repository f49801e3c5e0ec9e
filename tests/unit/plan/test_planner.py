"""The planner: properties over random item sets, rules, estimates, and every registered strategy."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.common.errors import UsageError
from ci_shards.model.plan import Granularity
from ci_shards.plan.choose import choose_shards
from ci_shards.plan.packing import STRATEGIES
from ci_shards.plan.planner import fragmentation, lower_bound, plan_items

FILES = [f"tests/test_{c}.py" for c in "abcdefgh"]


@st.composite
def suites(draw):
    """Random items in a few files (some in classes), durations with heavy tails, some unknown."""
    names = draw(st.lists(st.integers(0, 400), min_size=0, max_size=60, unique=True))
    items = []
    for n in names:
        file = FILES[n % len(FILES)]
        items.append(f"{file}::Test{n % 3}::test_{n}" if n % 5 == 0 else f"{file}::test_{n}")
    durations = {}
    for item in items:
        kind = draw(st.sampled_from(["known", "known", "known", "unknown", "zero"]))
        if kind == "known":
            durations[item] = draw(st.floats(0.001, 200.0, allow_nan=False))
        elif kind == "zero":
            durations[item] = 0.0
    shards = draw(st.integers(1, 12))
    return items, durations, shards


GRANULARITIES = [Granularity.AUTO, Granularity.TEST]


@settings(max_examples=150, deadline=None)
@given(suites(), st.sampled_from(GRANULARITIES), st.sampled_from(sorted(STRATEGIES)), st.booleans())
def test_every_item_exactly_once_and_no_empty_shard(suite, granularity, strategy, untimed):
    items, durations, shards = suite
    plan = plan_items(items, durations, shards, granularity=granularity, strategy=strategy, untimed=untimed)
    assert sorted(plan.items) == sorted(set(items))
    assert len(plan.items) == len(set(plan.items))
    assert plan.total == shards == len(plan.shards)
    assert [s.index for s in plan.shards] == list(range(1, shards + 1))
    empty = [s for s in plan.shards if not s.items]
    if len(items) >= shards:
        assert not empty
    else:
        assert len(empty) == shards - len(items)
        assert any("empty" in note for note in plan.notes)


@settings(max_examples=100, deadline=None)
@given(suites(), st.sampled_from(GRANULARITIES), st.randoms(use_true_random=False), st.booleans())
def test_identical_bytes_for_any_input_order(suite, granularity, rnd, untimed):
    items, durations, shards = suite
    shuffled = list(items) + list(items[: len(items) // 3])  # duplicates too
    rnd.shuffle(shuffled)
    reordered = dict(sorted(durations.items(), key=lambda _: rnd.random()))
    a = plan_items(items, durations, shards, granularity=granularity, untimed=untimed)
    b = plan_items(shuffled, reordered, shards, granularity=granularity, untimed=untimed)
    assert a.dumps() == b.dumps()


@settings(max_examples=150, deadline=None)
@given(suites(), st.sampled_from(GRANULARITIES))
def test_makespan_within_four_thirds_of_lower_bound_plus_largest(suite, granularity):
    items, durations, shards = suite
    plan = plan_items(items, durations, shards, granularity=granularity)
    if not plan.items:
        return
    largest = max(s.estimated_seconds for s in plan.shards)
    largest_item = max(max(durations.get(i, 0.0), 0.001) for i in plan.items)
    assert largest <= 4 / 3 * plan.lower_bound_seconds + largest_item + 0.002
    assert largest >= plan.lower_bound_seconds - 0.002  # the bound is a bound


def test_lower_bound_terms():
    assert lower_bound([], 3) == 0
    assert lower_bound([10, 10, 10, 10], 2) == 20  # total / N
    assert lower_bound([100, 1, 1], 2) == 100  # longest
    assert lower_bound([6, 6, 6], 2) == 12  # N-th + (N+1)-th longest


def test_file_granularity_keeps_files_whole_and_reports_empty_shards():
    items = [f"{f}::t{i}" for f in FILES[:3] for i in range(4)]
    plan = plan_items(items, {i: 1.0 for i in items}, 4, granularity=Granularity.FILE)
    assert plan.files_cut == 0
    assert fragmentation(plan) == 1.0
    assert sum(1 for s in plan.shards if not s.items) == 1
    assert "1 of 4 shards are empty (shard 4): only 3 files" in plan.notes[-1]


def test_auto_cuts_a_file_only_when_balance_needs_it():
    # one big file and a small one: whole files give 10 vs 2, so the big file must be cut
    items = [f"tests/big.py::t{i}" for i in range(10)] + ["tests/small.py::t0", "tests/small.py::t1"]
    durations = {i: 1.0 for i in items}
    plan = plan_items(items, durations, 2)
    assert plan.estimated_makespan == 6.0 == plan.lower_bound_seconds
    assert plan.files_cut == 1
    assert "1 file cut to balance, each setting up once per shard it is in: tests/big.py (2 shards)" in plan.notes
    balanced = [f"tests/f{n}.py::t{i}" for n in range(4) for i in range(3)]
    plan = plan_items(balanced, {i: 1.0 for i in balanced}, 2)
    assert plan.files_cut == 0


def test_unknown_items_estimated_from_file_then_everything():
    durations = {"a.py::t1": 2.0, "a.py::t2": 4.0, "b.py::t1": 10.0}
    plan = plan_items([*durations, "a.py::new", "c.py::new"], durations, 1)
    # a.py::new = median(2, 4) = 3; c.py::new = median(2, 4, 10) = 4
    assert plan.shards[0].estimated_seconds == pytest.approx(2 + 4 + 10 + 3 + 4)
    assert plan.unknown_items == 2
    assert "2 of 5 items had no timing" in plan.notes[0]
    assert "file's known items (1)" in plan.notes[0]


def test_no_timings_at_all_uses_a_default_and_says_so():
    plan = plan_items(["a::t", "b::t", "c::t"], {}, 3)
    assert [s.estimated_seconds for s in plan.shards] == [1.0, 1.0, 1.0]
    assert "no timings at all" in plan.notes[0]


def test_keep_together_class_never_splits_a_class():
    items = [f"t.py::TestA::test_{i}" for i in range(6)] + [f"t.py::test_{i}" for i in range(6)]
    plan = plan_items(items, {i: 1.0 for i in items}, 4, granularity=Granularity.TEST, keep_together=["class"])
    holders = [s.index for s in plan.shards if any("TestA" in i for i in s.items)]
    assert len(holders) == 1
    plain = plan_items(items, {i: 1.0 for i in items}, 4, granularity=Granularity.TEST)
    assert len([s for s in plain.shards if any("TestA" in i for i in s.items)]) > 1


def test_keep_together_glob_joins_files():
    items = [f"tests/db/test_{n}.py::t{i}" for n in range(3) for i in range(3)] + [f"x{i}.py::t" for i in range(9)]
    plan = plan_items(items, {i: 1.0 for i in items}, 3, keep_together=["tests/db/*"])
    holders = [s for s in plan.shards if any(i.startswith("tests/db/") for i in s.items)]
    assert len(holders) == 1
    assert sum(i.startswith("tests/db/") for i in holders[0].items) == 9


def test_weights_multiply_estimates():
    durations = {"a.py::t": 1.0, "b.py::t": 1.0}
    plan = plan_items(durations, durations, 1, weights={"a.py": 3.0})
    assert plan.shards[0].estimated_seconds == 4.0
    with pytest.raises(UsageError, match="positive"):
        plan_items(durations, durations, 1, weights={"a.py": 0.0})


def test_max_items_per_shard():
    items = [f"f{i}.py::t" for i in range(10)]
    durations = {i: 1.0 for i in items}
    durations["f0.py::t"] = 100.0  # LPT alone would put everything else together
    plan = plan_items(items, durations, 3, max_items_per_shard=4)
    assert max(len(s.items) for s in plan.shards) <= 4
    assert sorted(plan.items) == sorted(items)
    with pytest.raises(UsageError, match="use at least 4 shards"):
        plan_items(items, durations, 3, max_items_per_shard=3)
    in_files = [f"f{n}.py::t{i}" for n in range(2) for i in range(5)]
    with pytest.raises(UsageError, match=r"f0\.py has 5 items, more than --max-items-per-shard 4"):
        plan_items(in_files, {}, 3, max_items_per_shard=4, granularity=Granularity.FILE)
    cut = plan_items(in_files, {}, 3, max_items_per_shard=4)
    assert max(len(s.items) for s in cut.shards) <= 4
    with pytest.raises(UsageError, match="keep-together group"):
        plan_items(items, durations, 5, max_items_per_shard=2, keep_together=["f[0-2].py"])


def test_bad_arguments():
    with pytest.raises(UsageError, match="at least 1"):
        plan_items(["a"], {}, 0)
    with pytest.raises(UsageError, match="unknown strategy"):
        plan_items(["a"], {}, 1, strategy="magic")
    with pytest.raises(UsageError, match="--cut-cost"):
        plan_items(["a"], {}, 1, cut_cost=-1.0)


def test_cut_cost_is_charged_and_discourages_cuts():
    items = [f"tests/big.py::t{i}" for i in range(10)] + ["tests/small.py::t0", "tests/small.py::t1"]
    durations = {i: 1.0 for i in items}
    cheap = plan_items(items, durations, 2)
    costly = plan_items(items, durations, 2, cut_cost=0.5)
    assert cheap.files_cut == costly.files_cut == 1
    assert sum(s.estimated_seconds for s in costly.shards) == pytest.approx(12.5)


def test_choose_shards_picks_smallest_fitting_count_with_reason():
    items = [f"f{i}.py::t" for i in range(40)]
    durations = {i: 10.0 for i in items}  # 400 s of work
    choice = choose_shards(items, durations, target_seconds=110, shard_overhead=10, max_shards=64)
    assert choice.plan.total == 4
    assert "4 shards" in choice.reason and "3 would take" in choice.reason
    assert choice.plan.notes[0] == choice.reason
    capped = choose_shards(items, durations, target_seconds=20, shard_overhead=15, max_shards=8)
    assert capped.plan.total == 8
    assert "not reachable" in capped.reason
    one = choose_shards(items, durations, target_seconds=1000, max_shards=8)
    assert one.plan.total == 1
    assert one.reason.startswith("1 shard: ")
    counted = choose_shards(items, durations, target_seconds=1000, max_shards=8, max_items_per_shard=15)
    assert counted.plan.total == 3
    assert "(--max-items-per-shard 15)" in counted.reason
    with pytest.raises(UsageError, match="need at least 5 shards"):
        choose_shards(items, durations, target_seconds=1000, max_shards=4, max_items_per_shard=9)


def test_large_plan_is_deterministic_and_balanced():
    rnd = random.Random(7)
    items = [f"tests/m{rnd.randrange(300)}.py::test_{n}" for n in range(3000)]
    durations = {i: rnd.lognormvariate(-2, 1.5) for i in items}
    plan = plan_items(items, durations, 16)
    assert plan.estimated_makespan / plan.lower_bound_seconds < 1.01
    assert fragmentation(plan) < 1.2
    assert plan.files_cut <= 15  # McNaughton: at most N-1 cuts


@settings(max_examples=100, deadline=None)
@given(
    suites(),
    st.sampled_from(list(Granularity)),
    st.sampled_from([(), ("class",), ("tests/test_a.py",), ("class", "*test_1*")]),
    st.sampled_from([None, {"tests/test_b.py": 3.0}, {"*Test*": 0.5}]),
    st.sampled_from([0.0, 0.5]),
    st.randoms(use_true_random=False),
    st.booleans(),
)
def test_rules_keep_every_item_once_and_order_independent(suite, granularity, rules, weights, cut_cost, rnd, untimed):  # noqa: PLR0917
    items, durations, shards = suite
    kwargs = {"granularity": granularity, "keep_together": rules, "weights": weights, "cut_cost": cut_cost}
    kwargs["untimed"] = untimed
    plan = plan_items(items, durations, shards, **kwargs)
    assert sorted(plan.items) == sorted(set(items))
    for rule in rules:  # a keep-together group lands in exactly one shard
        if rule == "class":
            classes = {i.rsplit("::", 1)[0] for i in items if i.count("::") == 2}
            for cls in classes:
                assert len({s.index for s in plan.shards for i in s.items if i.startswith(cls + "::")}) == 1
    shuffled = list(items)
    rnd.shuffle(shuffled)
    assert plan_items(shuffled, durations, shards, **kwargs).dumps() == plan.dumps()


@settings(max_examples=60, deadline=None)
@given(suites(), st.integers(1, 8))
def test_max_items_per_shard_holds_or_is_refused(suite, limit):
    items, durations, shards = suite
    try:
        plan = plan_items(items, durations, shards, max_items_per_shard=limit)
    except UsageError:
        assert len(set(items)) > shards * limit
        return
    assert max((len(s.items) for s in plan.shards), default=0) <= limit
    assert sorted(plan.items) == sorted(set(items))


def test_a_keep_together_rule_that_matches_nothing_is_named_in_the_notes():
    items = ["tests/db/test_a.py::t", "tests/web/test_b.py::t"]
    plan = plan_items(items, {i: 1.0 for i in items}, 2, keep_together=["tests/db/*", "tests/dbs/*", "class"])
    assert [n for n in plan.notes if "matches no item" in n] == [
        "keep-together rule 'tests/dbs/*' matches no item (a typo?)"
    ]
