"""A first plan, with no timings, deals each file's test classes and functions over the shards (``deal_scopes``).

What a test costs is unknown before its first run, and files differ in cost per test by far more than
their counts do (docs/planning.md#the-first-plan); these tests hold the rule that makes that unknown
harmless: each shard gets its share of every file, whatever each file's tests really cost.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.model.matching import item_file
from ci_shards.model.plan import Granularity
from ci_shards.options.typed import PlanOptions
from ci_shards.plan.front import make_plan
from ci_shards.plan.planner import plan_items


def _shard_of(plan) -> dict[str, int]:
    return {item: shard.index for shard in plan.shards for item in shard.items}


@st.composite
def untimed_suites(draw):
    """Files of plain test functions, each test estimated alike (what a count says), and shards."""
    sizes = draw(st.lists(st.integers(1, 40), min_size=1, max_size=8))
    items = [f"tests/test_{f}.py::test_{n:02d}" for f, size in enumerate(sizes) for n in range(size)]
    return items, draw(st.integers(1, 8))


@settings(max_examples=150, deadline=None)
@given(untimed_suites(), st.lists(st.floats(0.001, 100.0), min_size=8, max_size=8))
def test_whatever_a_file_really_costs_no_shard_exceeds_the_mean_by_more_than_one_test_of_each_file(suite, cost):
    """Each file's functions go round the shards, so a shard holds its share of every file, give or take
    one function: whatever each file's tests really cost (``cost``, one figure per file, unknown to the
    plan), the slowest shard is at most the mean plus one test of each file."""
    items, shards = suite
    plan = plan_items(items, {}, shards, untimed=True)
    per_file = Counter(item_file(i) for i in items)
    for file, total in per_file.items():
        held = Counter(shard.index for shard in plan.shards for i in shard.items if item_file(i) == file)
        assert max(held.values()) - min(held.get(s.index, 0) for s in plan.shards) <= 1, file
        assert sum(held.values()) == total
    real = {f"tests/test_{n}.py": c for n, c in enumerate(cost)}
    loads = [sum(real[item_file(i)] for i in shard.items) for shard in plan.shards]
    assert max(loads) <= sum(loads) / shards + sum(real[f] for f in per_file) + 1e-6


def test_a_file_of_costly_tests_is_every_shards_share_not_one_shards():
    """pint 0.25.3's shape: a few files whose tests cost ten times the others', by count no different.
    Kept whole they land in one shard; dealt, every shard runs a quarter of them."""
    items = [f"tests/test_{name}.py::test_{n:02d}" for name in ("cheap1", "cheap2", "cheap3", "dear") for n in range(8)]
    real = {i: (10.0 if "dear" in i else 1.0) for i in items}
    dealt = plan_items(items, {}, 4, untimed=True)
    whole = plan_items(items, {}, 4)  # the same count, as if timed alike: files kept whole
    assert [sum(real[i] for i in s.items) for s in dealt.shards] == [26.0] * 4
    assert max(sum(real[i] for i in s.items) for s in whole.shards) == 80.0
    assert any("no test has a timing yet" in note and "4 files in more than one" in note for note in dealt.notes)


def test_a_class_and_a_keep_together_group_stay_in_one_shard_a_module_functions_cases_go_round():
    """A class's methods may share state in the order they run (pint 0.25.3's ``TestIssues`` sets its
    registry's options in one test for the next: dealt by method, two of its tests failed), and its class
    fixtures are set up once: a class is one piece, as it is one unit for pytest-xdist's ``loadscope``.
    A module-level function's collected cases are tests like any other (babel 2.19.0: one function of
    2,294 cases is a quarter of the suite)."""
    cases = [f"tests/test_a.py::test_p[{n}]" for n in range(6)]
    classes = [f"tests/test_a.py::TestK::test_{n}" for n in range(4)]
    nested = [f"tests/test_a.py::TestOuter::TestInner::test_{n}" for n in range(4)]
    grouped = [f"tests/test_c.py::test_{n}" for n in range(4)]
    others = [f"tests/test_b.py::test_{n}" for n in range(10)]
    items = [*cases, *classes, *nested, *grouped, *others]
    plan = plan_items(items, {}, 3, untimed=True, keep_together=["tests/test_c.py"])
    shard = _shard_of(plan)
    for together in (classes, nested, grouped):
        assert len({shard[i] for i in together}) == 1, together
    assert len({shard[o] for o in others}) == 3  # the module-level functions still go round
    assert len({shard[c] for c in cases}) == 3  # and so do a parametrized one's collected cases


@pytest.mark.parametrize("granularity", [Granularity.FILE, Granularity.TEST])
def test_only_granularity_auto_deals(granularity):
    """``--granularity file`` keeps files whole without timings too, and ``test`` was already per test."""
    items = [f"tests/test_{f}.py::test_{n}" for f in "ab" for n in range(6)]
    plan = plan_items(items, {}, 2, untimed=True, granularity=granularity)
    assert not any("no test has a timing yet" in note for note in plan.notes)
    if granularity is Granularity.FILE:
        assert plan.files_cut == 0


def test_with_timings_a_plan_keeps_files_whole_where_balance_allows():
    items = [f"tests/test_{f}.py::test_{n}" for f in "abcd" for n in range(6)]
    plan = plan_items(items, dict.fromkeys(items, 1.0), 4)
    assert plan.files_cut == 0
    assert plan_items(items, dict.fromkeys(items, 1.0), 4, untimed=True).files_cut == 4


def _project(root) -> None:
    """Two test files of four functions each (one parametrized over three cases), no timings."""
    body = "import pytest\n\n@pytest.mark.parametrize('x', [1, 2, 3])\ndef test_p(x):\n    pass\n"
    body += "".join(f"\ndef test_{n}():\n    pass\n" for n in range(3))
    for name in ("test_a.py", "test_b.py"):
        (root / name).write_text(body)


def _tests_by_shard(plan, cases: int) -> list[int]:
    """Tests per shard, a discovered ``test_p`` (one item for its ``cases`` cases) counted as its cases."""
    return [sum(cases if i.endswith("::test_p") else 1 for i in shard.items) for shard in plan.shards]


ENV = {"PATH": "/usr/bin:/bin", "SOURCE_DATE_EPOCH": "0"}


def test_both_plan_modes_deal_a_first_plan_alike_and_a_timed_project_keeps_files_whole(tmp_path):
    """End to end through ``make_plan``: discovery (files read as text) and ``--pytest`` (collected) find
    no timing, deal every file over both shards, and agree on the shards' sizes (discovery keeps a
    parametrized function's cases together, whose ids the text does not give); once a timing file
    names the tests, files stay whole."""
    _project(tmp_path)
    words = ["-p", "no:cacheprovider"]
    discovered = make_plan(PlanOptions(discover=True, shards="2"), env=ENV, cwd=tmp_path, pytest_args=words)
    collected = make_plan(PlanOptions(pytest=True, shards="2"), env=ENV, cwd=tmp_path, pytest_args=words)
    for plan in (discovered, collected):
        assert plan.files_cut == 2
        assert any(n.startswith("no test has a timing yet") for n in plan.notes), plan.notes
        assert {item_file(i) for i in plan.shards[0].items} == {"test_a.py", "test_b.py"}
    assert _tests_by_shard(discovered, 3) == _tests_by_shard(collected, 3) == [6, 6]
    assert any("or dealt over them in a first plan" in n for n in discovered.notes)
    ids = [i for shard in collected.shards for i in shard.items]
    (tmp_path / ".test_durations").write_text(json.dumps(dict.fromkeys(ids, 0.5)))
    for how in ({"discover": True}, {"pytest": True}):
        options = PlanOptions(**how, shards="2", durations=(".test_durations",))
        timed = make_plan(options, env=ENV, cwd=tmp_path, pytest_args=words)
        assert timed.files_cut == 0, how
        assert not any("no test has a timing yet" in n for n in timed.notes)
