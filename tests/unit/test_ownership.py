"""Property (issue 8.5): with ``--pytest`` every collected test runs in exactly one shard, planned or not.

The plugin's selection (``_Selection``) is checked over every pytest process a run starts: one per
shard, or one per batch when a shard's command line is split, where only the unowned shard's last
batch is given the run's roots and collects files no shard planned.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.model import Granularity, Plan, ShardPlan, item_file, pick_unowned_shard
from ci_shards.pytest_plugin import _Selection

FILES = [f"t/{name}.py" for name in ("a", "b", "c", "d", "e")]
FUNCS = ["test_x", "test_y", "TestK::test_m"]
PARAMS = ["", "[1]", "[a::b]", "[c/d]", "[ü]"]


@st.composite
def runs(draw: st.DrawFn) -> tuple[Plan, list[str], list[list[list[str]]]]:
    """(a plan, every test pytest would collect, each shard's files split into batches)."""
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
    plan = Plan(
        total=total,
        granularity=Granularity.TEST,
        shards=shards,
        lower_bound_seconds=0.0,
        unknown_items=0,
        unowned_shard=pick_unowned_shard(shards),
    )
    batches = []
    for its in shards_items:
        files = sorted({item_file(i) for i in its})
        cuts = sorted(draw(st.sets(st.integers(1, max(1, len(files) - 1)), max_size=2))) if len(files) > 1 else []
        bounds = [0, *cuts, len(files)]
        batches.append([files[a:b] for a, b in itertools.pairwise(bounds) if files[a:b]])
    return plan, collected, batches


# the fast run's sample; the full one is the slow-marked `_thorough` twin below (tests/README.md, "Property tests")
@settings(max_examples=150, deadline=None)
@given(runs())
def test_every_collected_test_runs_in_exactly_one_process(run: tuple[Plan, list[str], list[list[list[str]]]]) -> None:
    plan, collected, batches = run
    ownership = plan.ownership()
    all_files = sorted({item_file(t) for t in collected})
    ran: dict[str, list[int]] = {t: [] for t in collected}
    for index, shard_batches in enumerate(batches, 1):
        if not plan.shard(index).items:
            continue  # an empty shard runs nothing (and is never the unowned shard)
        items = list(plan.shard(index).items)
        own_files = frozenset(item_file(i) for i in items)
        for number, batch_files in enumerate(shard_batches, 1):
            split = len(shard_batches) > 1
            batch_items = [i for i in items if item_file(i) in batch_files] if split else items
            selection = _Selection(
                batch_items,
                ownership=ownership,
                index=index,
                batch=frozenset(batch_files) if split else None,
                own_files=own_files,
            )
            roots = index == plan.unowned_shard and number == len(shard_batches)
            # what the process collects: its files, or the roots without the files skipped before import
            given = all_files if roots else batch_files
            collected_files = [f for f in given if not (roots and selection.skips_file(f))]
            for test in collected:
                if item_file(test) in collected_files and selection.keeps(test, test):
                    ran[test].append(index)
    assert all(len(shards) == 1 for shards in ran.values()), ran
    for test, (shard,) in ran.items():
        assert shard == ownership.shard_of(test)
        planned = ownership.planned_shard(test)
        assert planned is None or shard == planned  # a planned test runs where the plan put it


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(runs())
def test_every_collected_test_runs_in_exactly_one_process_thorough(
    run: tuple[Plan, list[str], list[list[list[str]]]],
) -> None:
    test_every_collected_test_runs_in_exactly_one_process.hypothesis.inner_test(run)
