"""Learned per-shard overhead: measured by aggregate, kept in the timings store, used by the plan.

A shard's overhead is its wall time minus its tests' time; one run records the median over the
shards that ran to the end; estimates are the median of the recent runs."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_shards.cli import main
from ci_shards.common.errors import UsageError
from ci_shards.model.outcome import CaseOutcome, ShardStatus
from ci_shards.model.plan import Plan
from ci_shards.plan.choose import MAX_SHARDS, choose_shards
from ci_shards.plan.workers import shard_seconds
from ci_shards.report.aggregate import aggregate_dirs
from ci_shards.report.overhead import (
    MIN_SPREAD,
    case_counts,
    critical_path_tests,
    per_test_overhead,
    run_overhead,
    shard_overheads,
)
from ci_shards.report.verdict import ShardResult
from ci_shards.timings.store import HISTORY, TimingsStore, load_timings, merge_stores, parse_timings_text
from tests.unit.aggregate_fixtures import case_for, flaky_case, make_plan, write_shard

ITEMS = [["tests/test_a.py::one", "tests/test_a.py::two"], ["tests/test_b.py::t"], ["tests/test_c.py::t"]]


@pytest.fixture(autouse=True)
def _not_on_github(monkeypatch):
    for key in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_EVENT_PATH", "GITHUB_TOKEN", "GITHUB_OUTPUT"):
        monkeypatch.delenv(key, raising=False)


# ---------------------------------------------------------------------------------------------
# the store


def test_store_keeps_the_last_runs_per_variant_and_estimates_their_median():
    store = TimingsStore()
    for seconds in (9.0, 1.0, 2.0, 3.0, 100.0, 4.0):
        store = store.record_overhead(seconds)
    assert store.overhead[""] == (1.0, 2.0, 3.0, 100.0, 4.0)[-HISTORY:]
    assert store.overhead_estimate() == (3.0, HISTORY)  # the 100 s outlier does not move it
    linux = store.record_overhead(7.0, variant="linux")
    assert linux.overhead_estimate("linux") == (7.0, 1)
    assert linux.overhead_estimate("macos") == (3.5, 6)  # a new variant borrows every variant's runs
    assert TimingsStore().overhead_estimate() is None
    assert store.record_overhead(float("nan")) == store  # unusable: not recorded


def test_store_round_trips_overhead_and_stores_without_it_keep_their_bytes():
    plain = TimingsStore().record({"t.py::a": 1.0})
    assert "overhead" not in plain.dumps()
    learned = plain.record_overhead(4.5, variant="linux")
    again = parse_timings_text(learned.dumps().encode(), "store.json")
    assert again == learned
    assert again.record({"t.py::a": 2.0}).overhead == learned.overhead  # recording items keeps it
    merged = merge_stores([learned, TimingsStore().record_overhead(6.5, variant="linux")])
    assert merged.overhead == {"linux": (4.5, 6.5)}


def test_store_counts_bad_overhead_samples_and_refuses_a_bad_shape():
    text = b'{"schema": "ci-shards/timings@1", "variants": {}, "overhead": {"": [1.0, -2, "x"], "v": 3}}'
    store = parse_timings_text(text, "s.json")
    assert store.overhead == {"": (1.0,)}
    assert store.warnings == ("s.json: skipped 3 unusable sample(s)",)
    with pytest.raises(Exception, match="'overhead' must be an object"):
        parse_timings_text(b'{"schema": "ci-shards/timings@1", "variants": {}, "overhead": [1]}', "s.json")


# ---------------------------------------------------------------------------------------------
# measuring


def _result(index, status=ShardStatus.PASSED, elapsed=10.0, cases=None, **kw):
    cases = (case_for(f"tests/t{index}.py::x", time=3.0),) if cases is None else tuple(cases)
    return ShardResult(index=index, status=status, elapsed_seconds=elapsed, cases=cases, **kw)


def test_overhead_is_wall_minus_test_time_of_shards_that_ran_to_the_end():
    flaky = flaky_case("tests/t9.py::f")  # 1.5 s, plus a 0.5 s failed attempt that also took wall time
    overheads = shard_overheads([
        _result(1),
        _result(2, ShardStatus.FAILED, elapsed=5.0),
        _result(3, ShardStatus.TIMED_OUT),
        _result(4, ShardStatus.PASSED, verified=False),
        _result(5, ShardStatus.EMPTY, cases=()),
        _result(6, elapsed=1.0),  # clocks disagree: never negative
        _result(7, elapsed=4.0, cases=[flaky]),
    ])  # fmt: skip
    assert overheads == {1: 7.0, 2: 2.0, 6: 0.0, 7: 2.0}
    assert run_overhead(overheads) == 2.0
    assert run_overhead({}) is None


def test_aggregate_records_the_runs_overhead_into_the_store(tmp_path, capsys):
    plan = make_plan(ITEMS)
    (tmp_path / "plan.json").write_text(plan.dumps())
    results = tmp_path / "results"
    write_shard(results, plan, 1, [case_for(ITEMS[0][0], time=1.0), case_for(ITEMS[0][1], time=1.0)], elapsed=6.0)
    write_shard(results, plan, 2, [case_for(ITEMS[1][0], time=1.0)], elapsed=4.0)
    write_shard(results, plan, 3, [case_for(ITEMS[2][0], CaseOutcome.FAILED, time=1.0)], elapsed=100.0)
    store_path = tmp_path / "timings.json"
    args = ["aggregate", "--plan", str(tmp_path / "plan.json"), str(results), "--timings-out", str(store_path)]
    assert main([*args, "--timings-variant", "linux"]) == 1
    assert load_timings(store_path).overhead == {"linux": (4.0,)}  # median of 4, 3 and 99 s
    assert "per-shard overhead of 4.00 s (median of 3 shards)" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# the part that grows with the number of tests


def test_per_test_overhead_is_the_robust_slope_over_the_shards_test_counts():
    # Pygments-like: 1.2 s fixed + 0.5 ms per test; shard 4 also has a 3 s session fixture
    cases = {1: 2759, 2: 595, 3: 607, 4: 1369}
    overheads = {i: 1.2 + 0.0005 * n for i, n in cases.items()}
    assert per_test_overhead(overheads, cases) == pytest.approx(0.0005)
    assert run_overhead(overheads, 0.0005, cases) == pytest.approx(1.2)
    overheads[4] += 3.0
    assert per_test_overhead(overheads, cases) == pytest.approx(0.0005)  # the median of 5 usable slopes
    # 2 and 3 differ by 2 %: their slope is noise and not taken; alone they tell nothing
    assert per_test_overhead({2: 1.5, 3: 1.6}, {2: 595, 3: 607}) is None
    assert per_test_overhead({1: 5.0}, {1: 100}) is None
    # never below 0, never above all the overhead spread over all the tests
    assert per_test_overhead({1: 9.0, 2: 1.0}, {1: 100, 2: 1000}) == 0.0
    assert per_test_overhead({1: 0.0, 2: 10.0}, {1: 100, 2: 200}) == pytest.approx(10.0 / 300)


@given(
    fixed=st.floats(0, 30),
    per_test=st.floats(0, 0.01),
    counts=st.lists(st.integers(1, 20_000), min_size=2, max_size=12, unique=True),
)
def test_an_exact_linear_overhead_is_recovered_and_the_estimate_stays_in_bounds(fixed, per_test, counts):
    cases = dict(enumerate(counts, start=1))
    overheads = {i: fixed + per_test * n for i, n in cases.items()}
    found = per_test_overhead(overheads, cases)
    # at least one pair far enough apart, by the rule's own measure: 10 % of the larger count (865 and 957 are
    # 10.6 % of the smaller apart, 9.6 % of the larger: no slope, as the rule says, where this said there was)
    spread = max(counts) - min(counts) >= MIN_SPREAD * max(counts)
    if not spread:
        return
    assert found is not None
    assert 0.0 <= found <= sum(overheads.values()) / sum(counts) + 1e-12
    assert found == pytest.approx(per_test, rel=1e-6, abs=1e-9)
    assert run_overhead(overheads, found, cases) == pytest.approx(fixed, rel=1e-6, abs=1e-6)


def _xdist_shard(index: int, files: list[int], *, seconds: float, fixed: float, per_test: float, workers: int):
    """A shard of ``files`` (tests per file) of ``seconds`` each, whose wall is ``fixed`` plus the makespan
    over ``workers`` of its tests each costing ``per_test`` more than it reports (the xdist model)."""
    ids = [f"tests/s{index}_f{f}.py::t{t}" for f, count in enumerate(files) for t in range(count)]
    wall = fixed + shard_seconds(ids, {i: seconds + per_test for i in ids}, workers)
    return _result(index, elapsed=wall, cases=[case_for(i, time=seconds) for i in ids])


def test_with_workers_a_test_counts_where_it_lengthens_the_makespan():
    one_file = _xdist_shard(1, [40], seconds=0.01, fixed=0.0, per_test=0.0, workers=2)
    many = _xdist_shard(2, [5] * 8, seconds=0.01, fixed=0.0, per_test=0.0, workers=2)
    assert critical_path_tests([one_file, many], workers=1) == {1: 40.0, 2: 40.0}
    found = critical_path_tests([one_file, many], workers=2)
    assert found[1] == pytest.approx(40.0)  # one file is one worker's: every test's overhead is paid in turn
    assert found[2] == pytest.approx(20.0)  # eight even files over two workers: half of them
    assert critical_path_tests([_result(3, cases=())], workers=2) == {3: 0.0}


@given(
    fixed=st.floats(0, 10),
    per_test=st.floats(0.0001, 0.01),
    shapes=st.lists(st.lists(st.integers(1, 30), min_size=1, max_size=12), min_size=2, max_size=6),
    workers=st.integers(1, 4),
)
def test_the_per_test_overhead_under_workers_is_recovered(fixed, per_test, shapes, workers):
    # shards of many small files: aggregate's fit over the tests on each shard's critical path finds the
    # per-test seconds the runs paid, and the fixed part, as a one-worker run's fit does over the counts
    shards = [
        _xdist_shard(i, files, seconds=0.002, fixed=fixed, per_test=per_test, workers=workers)
        for i, files in enumerate(shapes, start=1)
    ]
    overheads = shard_overheads(shards, workers=workers)
    paths = critical_path_tests(shards, workers=workers)
    found = per_test_overhead(overheads, paths)
    usable = [p for i, p in paths.items() if i in overheads]
    if found is None:
        assert max(usable) - min(usable) < MIN_SPREAD * max(usable) + 1e-9  # no two shards far enough apart
        return
    assert found == pytest.approx(per_test, rel=0.05, abs=2e-5)
    assert run_overhead(overheads, found, paths) == pytest.approx(fixed, rel=0.05, abs=0.02)


def test_a_plan_for_k_workers_adds_the_per_test_overhead_learned_with_k(tmp_path, capsys, monkeypatch):
    store = TimingsStore().record({f"tests/test_{n}.py::t": 1.0 for n in range(4)})
    store = store.record_overhead(1.0, per_test=0.001).record_overhead(2.0, per_test=0.004, variant="@workers=2")
    (tmp_path / "timings.json").write_text(store.dumps())
    monkeypatch.chdir(tmp_path)
    base = ["plan", "--durations", "timings.json", "--from-timings", "--format", "json", "--shards", "2"]
    notes = {}
    for workers in ("1", "2", "3"):
        assert main([*base, "--workers", workers]) == 0
        notes[workers] = capsys.readouterr().err
    assert "includes 1 ms of per-test overhead" in notes["1"]
    assert "includes 4 ms of per-test overhead" in notes["2"]  # learned from runs with 2 workers
    assert "includes 2.5 ms of per-test overhead" in notes["3"]  # none with 3: the median of every run's


def test_the_store_keeps_per_test_samples_beside_the_fixed_ones():
    store = TimingsStore().record({"t.py::a": 1.0})
    assert store.record_overhead(4.0).test_overhead == {}  # a run that could not tell records none
    for fixed, per_test in ((4.0, 0.001), (5.0, 0.003), (6.0, 0.002)):
        store = store.record_overhead(fixed, per_test=per_test, variant="linux")
    assert store.test_overhead_estimate("linux") == (0.002, 3)
    assert store.test_overhead_estimate("macos") == (0.002, 3)  # borrowed, as the fixed part is
    again = parse_timings_text(store.dumps().encode(), "store.json")
    assert again == store and again.record({"t.py::a": 2.0}).test_overhead == store.test_overhead
    assert merge_stores(
        [store, TimingsStore().record_overhead(1.0, per_test=0.004, variant="linux")]
    ).test_overhead == {"linux": (0.001, 0.003, 0.002, 0.004)}
    with pytest.raises(Exception, match="'test_overhead' must be an object"):
        parse_timings_text(b'{"schema": "ci-shards/timings@1", "variants": {}, "test_overhead": [1]}', "s.json")


def test_aggregate_learns_the_per_test_part_and_the_plan_balances_with_it(tmp_path, capsys, monkeypatch):
    # one run: shard 1 ran 40 tiny tests, shard 2 ran 4 long ones, their times balanced; shard 1's
    # wall is longer by 0.05 s per test
    tiny = [f"tests/test_tiny.py::t{n}" for n in range(40)]
    long = [f"tests/test_long_{n}.py::t" for n in range(4)]
    plan = make_plan([tiny, long])
    (tmp_path / "plan.json").write_text(plan.dumps())
    results = tmp_path / "results"
    write_shard(results, plan, 1, [case_for(t, time=0.1) for t in tiny], elapsed=1.0 + 4.0 + 40 * 0.05)
    write_shard(results, plan, 2, [case_for(t, time=1.0) for t in long], elapsed=1.0 + 4.0 + 4 * 0.05)
    store_path = tmp_path / "timings.json"
    assert (
        main(["aggregate", "--plan", str(tmp_path / "plan.json"), str(results), "--timings-out", str(store_path)]) == 0
    )
    store = load_timings(store_path)
    assert store.test_overhead_estimate() == (pytest.approx(0.05), 1)
    assert store.overhead_estimate() == (pytest.approx(1.0), 1)
    assert "a per-shard overhead of 1.00 s (median of 2 shards) plus 50 ms per test" in capsys.readouterr().err
    assert case_counts(aggregate_dirs(plan, [results]).shards) == {1: 40, 2: 4}
    capsys.readouterr()
    monkeypatch.chdir(tmp_path)
    base = ["plan", "--durations", str(store_path), "--from-timings", "--format", "json", "--shards", "2"]
    assert main(base) == 0
    out, err = capsys.readouterr()
    learned = Plan.from_json(json.loads(out))
    assert "each test's estimate includes 50 ms of per-test overhead (learned: median of 1 run)" in err
    # 40 x 0.15 s against 4 x 1.05 s: the tiny tests no longer fit in one shard
    assert learned.estimated_makespan == pytest.approx(5.1)
    tiny_shard = max(learned.shards, key=lambda s: sum(1 for i in s.items if "tiny" in i))
    assert sum(1 for i in tiny_shard.items if "tiny" in i) < 40
    # a fixed overhead of the user's own, by flag (0 included) or config, turns the learned one off
    assert main([*base, "--shard-overhead", "0"]) == 0
    out, err = capsys.readouterr()
    assert Plan.from_json(json.loads(out)).estimated_makespan == pytest.approx(4.0)
    assert "per-test overhead" not in err
    assert main([*base, "--shard-overhead", "2"]) == 0
    assert Plan.from_json(json.loads(capsys.readouterr().out)).shard_overhead_seconds == 2.0
    (tmp_path / "ci-shards.yml").write_text("shard-overhead: 0\n")
    assert main(base) == 0
    assert Plan.from_json(json.loads(capsys.readouterr().out)).estimated_makespan == pytest.approx(4.0)


def test_the_verdict_estimates_include_the_plans_overhead(tmp_path):
    plan = dataclasses.replace(make_plan([*ITEMS, []]), shard_overhead_seconds=5.0)
    assert Plan.from_json(json.loads(plan.dumps())) == plan
    for index in (1, 2, 3):
        write_shard(tmp_path, plan, index)
    verdict = aggregate_dirs(plan, [tmp_path])
    assert [s.estimated_seconds for s in verdict.shards] == [s.estimated_seconds + 5.0 for s in plan.shards[:3]] + [
        plan.shards[3].estimated_seconds  # an empty shard runs nothing: no overhead expected
    ]
    assert verdict.estimated_makespan == plan.estimated_makespan + 5.0


def test_a_plan_without_overhead_keeps_its_bytes():
    plan = make_plan(ITEMS)
    assert "shard_overhead_seconds" not in plan.dumps()
    with pytest.raises(ValueError, match="shard_overhead_seconds"):
        Plan.from_json({**plan.content(), "shard_overhead_seconds": -1})


# ---------------------------------------------------------------------------------------------
# choosing N


def test_a_short_suite_is_not_split_into_shards_of_start_up():
    items = [f"tests/test_{n}.py::t" for n in range(15)]
    durations = dict.fromkeys(items, 1.0)  # 15 s of tests
    alone = choose_shards(items, durations, target_seconds=30, shard_overhead=10, max_shards=64)
    assert alone.plan.total == 1
    assert alone.plan.shard_overhead_seconds == 10
    assert alone.reason == "1 shard: slowest shard 15.0 s + 10 s overhead ≤ target 30 s"
    # with 8 s of start-up no N reaches 8.5 s: the best is one test per shard, never more shards
    tight = choose_shards(items, durations, target_seconds=8.5, shard_overhead=8, max_shards=64)
    assert tight.plan.total == 15
    assert "not reachable" in tight.reason
    assert "only 15 items" in tight.reason
    assert tight.plan.notes[0] == tight.reason


def test_unreachable_target_takes_the_fewest_shards_within_two_percent_of_the_best():
    items = ["tests/big.py::t"] + [f"tests/small_{n}.py::t" for n in range(200)]
    durations = {"tests/big.py::t": 100.0} | {i: 1.0 for i in items[1:]}
    choice = choose_shards(items, durations, target_seconds=50, shard_overhead=5, max_shards=64)
    # the 100 s test bounds every plan: 3 shards already reach 105 s
    assert choice.plan.total == 3
    assert choice.plan.estimated_makespan + 5 == pytest.approx(105.0)
    assert "shorten it by under 2%" in choice.reason


def test_never_more_shards_than_items_nor_than_max_shards():
    items = [f"tests/t{n}.py::t" for n in range(300)]
    durations = dict.fromkeys(items, 10.0)
    # past GitHub's 256 only when --max-shards allows it; plan/matrix then refuse it (test_cli_guards)
    assert choose_shards(items, durations, target_seconds=1, max_shards=1000).plan.total == 300
    assert choose_shards(items, durations, target_seconds=1, max_shards=MAX_SHARDS).plan.total == 150
    few = choose_shards(items[:5], durations, target_seconds=1, max_shards=64)
    assert few.plan.total == 5
    assert "only 5 items" in few.reason
    with pytest.raises(UsageError, match="--shard-overhead"):
        choose_shards(items, durations, target_seconds=1, shard_overhead=-1, max_shards=8)


# ---------------------------------------------------------------------------------------------
# the plan command


def test_plan_uses_the_learned_overhead_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = TimingsStore().record({f"tests/test_{n}.py::t": 2.0 for n in range(8)})  # 16 s of tests
    for seconds in (6.0, 5.0, 7.0):
        store = store.record_overhead(seconds)
    (tmp_path / "timings.json").write_text(store.dumps())
    base = ["plan", "--durations", "timings.json", "--from-timings", "--format", "json"]
    assert main([*base, "--shards", "auto", "--target-seconds", "11"]) == 0
    out, err = capsys.readouterr()
    plan = Plan.from_json(json.loads(out))
    assert plan.shard_overhead_seconds == 6.0
    assert plan.total == 4  # 4 s of tests + 6 s ≤ 11 s; 3 shards would take 6 + 6
    assert "6 s overhead (learned: median of 3 runs)" in err
    assert main([*base, "--shards", "2"]) == 0
    out, err = capsys.readouterr()
    assert Plan.from_json(json.loads(out)).shard_overhead_seconds == 6.0
    assert "every shard also pays 6 s of fixed overhead (learned: median of 3 runs)" in err
    assert main([*base, "--shards", "auto", "--target-seconds", "11", "--shard-overhead", "0.5"]) == 0
    assert Plan.from_json(json.loads(capsys.readouterr().out)).total == 2  # the flag wins: 8 + 0.5 ≤ 11
