"""Property (issue 8.5): with ``--pytest`` every collected test runs in exactly one shard, planned or not.

The plugin's selection (``_Selection``) is checked over every pytest process a run starts, one per
shard: each walks the user's whole selection less the files ``skips`` leaves out before they are
imported, and a shard other than the unowned one collects no file but its own (issue 26).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.model.matching import item_candidates, item_file, owning_item
from ci_shards.model.plan import Granularity, Plan, ShardPlan, pick_unowned_shard
from ci_shards.pytest_plugin import _Selection

FILES = [f"t/{name}.py" for name in ("a", "b", "c", "d", "e")]
FUNCS = ["test_x", "test_y", "TestK::test_m"]
PARAMS = ["", "[1]", "[a::b]", "[c/d]", "[ü]"]


@st.composite
def runs(draw: st.DrawFn) -> tuple[Plan, list[str]]:
    """(a plan, every test pytest would collect)."""
    tests = sorted(
        draw(st.sets(st.tuples(st.sampled_from(FILES), st.sampled_from(FUNCS), st.sampled_from(PARAMS)), min_size=1))
    )
    collected = [f"{f}::{fn}{p}" for f, fn, p in tests]
    total = draw(st.integers(1, 4))
    # planned items: some collected tests, some at function, class or file level; the rest are new
    candidates = sorted({c for f, fn, p in tests for c in (f"{f}::{fn}{p}", f"{f}::{fn}", f, f"{f}::TestK")})
    # at least one item: a plan with none runs nothing and fails as empty (issue 8.1)
    items = draw(st.lists(st.sampled_from(candidates), unique=True, min_size=1, max_size=8))
    shards_items: list[list[str]] = [[] for _ in range(total)]
    for item in items:
        shards_items[draw(st.integers(0, total - 1))].append(item)
    shards = tuple(ShardPlan(i + 1, tuple(its), float(draw(st.integers(0, 9)))) for i, its in enumerate(shards_items))
    # items a change-based selection skipped: apart from every planned one (neither covers the other)
    apart = [c for c in candidates if not any(_related(c, i) for i in items)]
    skipped = draw(st.lists(st.sampled_from(apart), unique=True, max_size=3)) if apart else []
    plan = Plan(
        total=total,
        granularity=Granularity.TEST,
        shards=shards,
        lower_bound_seconds=0.0,
        unknown_items=0,
        unowned_shard=pick_unowned_shard(shards),
        skipped_by_diff=dict.fromkeys(skipped, "not in the change"),
    )
    return plan, collected


def _related(a: str, b: str) -> bool:
    return a in item_candidates(b) or b in item_candidates(a)


# the fast run's sample; the full one is the slow-marked `_thorough` twin below (tests/README.md, "Property tests")
@settings(max_examples=150, deadline=None)
@given(runs())
def test_every_collected_test_runs_in_exactly_one_process(run: tuple[Plan, list[str]]) -> None:
    plan, collected = run
    ownership = plan.ownership()
    all_files = sorted({item_file(t) for t in collected})
    ran: dict[str, list[int]] = {t: [] for t in collected}
    for index in range(1, plan.total + 1):
        if not plan.shard(index).items:
            continue  # an empty shard runs nothing (and is never the unowned shard)
        selection = _Selection(list(plan.shard(index).items), ownership=ownership, index=index)
        walked = [f for f in all_files if not selection.skips("t", is_dir=True)]
        imported = [f for f in walked if not selection.skips(f, is_dir=False)]
        if index != plan.unowned_shard:
            assert set(imported) <= {item_file(i) for i in plan.shard(index).items}
        for test in collected:
            if item_file(test) in imported and selection.keeps(test, test):
                ran[test].append(index)
    # what the selection skipped runs nowhere (the unowned shard ran it as unplanned: the selection saved nothing)
    skipped = {t for t in collected if owning_item(t, plan.skipped_by_diff) is not None}
    assert all(not ran.pop(test) for test in skipped), skipped
    assert all(len(shards) == 1 for shards in ran.values()), ran
    for test, (shard,) in ran.items():
        assert shard == ownership.shard_of(test)
        planned = ownership.planned_shard(test)
        assert planned is None or shard == planned  # a planned test runs where the plan put it


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(runs())
def test_every_collected_test_runs_in_exactly_one_process_thorough(
    run: tuple[Plan, list[str]],
) -> None:
    test_every_collected_test_runs_in_exactly_one_process.hypothesis.inner_test(run)


def test_a_shard_walks_only_the_folders_of_its_files_and_the_unowned_shard_walks_every_folder() -> None:
    shards = (
        ShardPlan(1, ("t/a/test_x.py", "t/b/test_y.py::test_q"), 1.0),
        ShardPlan(2, ("t/b/test_y.py::test_r",), 2.0),
    )
    plan = Plan(total=2, granularity=Granularity.TEST, shards=shards, lower_bound_seconds=0.0, unknown_items=0)
    first, second = (_Selection(list(s.items), ownership=plan.ownership(), index=s.index) for s in shards)
    unowned = first if plan.ownership().unowned_shard == 1 else second
    other = second if unowned is first else first
    assert [other.skips(d, is_dir=True) for d in ("t", "t/b", "t/c")] == [False, False, True]
    assert not unowned.skips("t/c", is_dir=True)  # a new file may be anywhere in the user's selection
    assert not second.skips("t/b/test_y.py", is_dir=False)  # a file cut across shards is each one's
    assert second.skips("t/a/test_x.py", is_dir=False) and not first.skips("t/a/test_x.py", is_dir=False)
    assert unowned.skips("t/c/test_new.py", is_dir=False) is False and other.skips("t/c/test_new.py", is_dir=False)
    rerun = _Selection(["t/b/test_y.py::test_q"])  # by id, no plan: only the failed tests' files and folders
    assert [rerun.skips(p, is_dir=d) for p, d in (("t/a", True), ("t/b", True), ("t/a/test_x.py", False))] == [
        True,
        False,
        True,
    ]
