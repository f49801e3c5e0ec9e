"""Each test file's collection seconds: measured in the shard, learned by aggregate, paid in the plan.

A shard pays the collection of every test file it holds part of, outside its tests' own times, and with
pytest-xdist every worker pays it before its first test. The plan models it per file (issue 23: the
shard holding pygments' ``test_basic_api.py`` ran 50 % off its estimate while the fixed overhead was one
median for all shards)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_shards.cli import main
from ci_shards.common.errors import InputError
from ci_shards.model.outcome import Outcome, ShardStatus, seconds_by_file
from ci_shards.model.plan import Plan
from ci_shards.plan.planner import collection_lumps, plan_items
from ci_shards.plan.workers import shard_seconds
from ci_shards.report.aggregate import aggregate_dirs
from ci_shards.report.overhead import shard_overheads
from ci_shards.timings.store import HISTORY, TimingsStore, load_timings, merge_stores, parse_timings_text
from tests.unit.aggregate_fixtures import case_for, make_plan, write_shard

A = ["tests/test_a.py::one", "tests/test_a.py::two"]
B = ["tests/test_b.py::t"]


@pytest.fixture(autouse=True)
def _not_on_github(monkeypatch):
    for key in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_EVENT_PATH", "GITHUB_TOKEN", "GITHUB_OUTPUT"):
        monkeypatch.delenv(key, raising=False)


# ---------------------------------------------------------------------------------------------
# outcome.json and the store


def test_outcome_keeps_the_collection_seconds_and_reads_damaged_ones_defensively():
    outcome = Outcome(plan_digest="d", shard_index=1, shard_total=1, status=ShardStatus.PASSED)
    assert "collect_seconds" not in outcome.to_json()  # absent when nothing was measured: old files keep their bytes
    measured = Outcome(**{**outcome.__dict__, "collect_seconds": {"b.py": 0.5, "a.py": 1.25}})
    data = json.loads(measured.dumps())
    assert list(data["collect_seconds"]) == ["a.py", "b.py"]
    assert Outcome.from_json(data).collect_seconds == {"a.py": 1.25, "b.py": 0.5}
    raw = {"a.py": 1, "b.py": -1, "c.py": "2", "d.py": float("nan"), "e.py": True, "f.py": 1e9}
    assert seconds_by_file(raw) == {"a.py": 1.0}
    assert seconds_by_file([1, 2]) == {}


def test_the_store_keeps_each_files_last_runs_per_variant_and_estimates_their_median():
    store = TimingsStore()
    for seconds in (9.0, 1.0, 2.0, 3.0, 100.0, 4.0):
        store = store.record_collection({"a.py": seconds, "b.py": float("nan")})
    assert store.collection == {"": {"a.py": (1.0, 2.0, 3.0, 100.0, 4.0)[-HISTORY:]}}
    assert store.collection_estimates() == {"a.py": 3.0}
    linux = store.record_collection({"a.py": 7.0, "c.py": 1.0}, variant="linux")
    assert linux.collection_estimates("linux") == {"a.py": 7.0, "c.py": 1.0}
    assert linux.collection_estimates("macos") == {"a.py": 3.5, "c.py": 1.0}  # every variant's samples pooled
    assert store.record_collection({}) is store


def test_the_store_round_trips_collection_and_stores_without_it_keep_their_bytes():
    plain = TimingsStore().record({"tests/test_a.py::one": 1.0})
    assert "collection" not in plain.to_json()
    learned = plain.record_collection({"tests/test_a.py": 0.25})
    again = parse_timings_text(learned.dumps().encode(), "store.json")
    assert again == learned
    assert merge_stores([learned, learned]).collection == {"": {"tests/test_a.py": (0.25, 0.25)}}
    with pytest.raises(InputError, match="'collection' must be an object"):
        parse_timings_text(b'{"schema": "ci-shards/timings@1", "variants": {}, "collection": {"": [1]}}', "s.json")
    text = b'{"schema": "ci-shards/timings@1", "variants": {}, "collection": {"": {"a.py": [1, -2, "x"]}}}'
    store = parse_timings_text(text, "s.json")
    assert store.collection_estimates() == {"a.py": 1.0}
    assert store.warnings == ("s.json: skipped 2 unusable sample(s)",)


# ---------------------------------------------------------------------------------------------
# learned by aggregate


def test_aggregate_learns_each_files_collection_apart_from_the_fixed_overhead(tmp_path, capsys):
    plan = make_plan([A, B])
    (tmp_path / "plan.json").write_text(plan.dumps())
    results = tmp_path / "results"
    # both shards: 1 s of fixed overhead; shard 1's file takes 3 s to collect, shard 2's 0.5 s
    write_shard(results, plan, 1, [case_for(t, time=1.0) for t in A], elapsed=1 + 2 + 3, collect_seconds={A[0][:15]: 3})
    write_shard(results, plan, 2, [case_for(B[0], time=1.0)], elapsed=1 + 1 + 0.5, collect_seconds={B[0][:15]: 0.5})
    verdict = aggregate_dirs(plan, [results])
    assert verdict.collect_seconds() == {"tests/test_a.py": 3.0, "tests/test_b.py": 0.5}
    assert shard_overheads(verdict.shards) == {1: pytest.approx(1.0), 2: pytest.approx(1.0)}
    store_path = tmp_path / "timings.json"
    assert (
        main(["aggregate", "--plan", str(tmp_path / "plan.json"), str(results), "--timings-out", str(store_path)]) == 0
    )
    store = load_timings(store_path)
    assert store.collection_estimates() == {"tests/test_a.py": 3.0, "tests/test_b.py": 0.5}
    assert store.overhead_estimate() == (pytest.approx(1.0), 1)


def test_a_shard_that_did_not_run_to_the_end_teaches_no_collection(tmp_path):
    plan = make_plan([A, B])
    results = tmp_path / "results"
    write_shard(results, plan, 1, [case_for(t) for t in A], collect_seconds={"tests/test_a.py": 3.0})
    write_shard(results, plan, 2, [], status=ShardStatus.TIMED_OUT, collect_seconds={"tests/test_b.py": 9.0})
    assert aggregate_dirs(plan, [results]).collect_seconds() == {"tests/test_a.py": 3.0}


# ---------------------------------------------------------------------------------------------
# paid in the plan


def test_the_plan_pays_each_files_collection_once_per_shard_holding_it(tmp_path, capsys, monkeypatch):
    items = [*A, *B, "tests/test_c.py::t"]
    store = TimingsStore().record(dict.fromkeys(items, 1.0)).record_collection({"tests/test_a.py": 3.0})
    (tmp_path / "timings.json").write_text(store.dumps())
    monkeypatch.chdir(tmp_path)
    base = ["plan", "--durations", "timings.json", "--from-timings", "--format", "json", "--shards", "2"]
    assert main(base) == 0
    out, err = capsys.readouterr()
    plan = Plan.from_json(json.loads(out))
    assert "each shard also pays the collection of the test files it holds (learned for 1 file, 3.0 s in all)" in err
    # test_a.py is 2 + 3 s: alone in its shard, against the other two files' 2 s
    assert sorted(s.items for s in plan.shards) == [tuple(A), ("tests/test_b.py::t", "tests/test_c.py::t")]
    assert sorted(s.estimated_seconds for s in plan.shards) == [2.0, 5.0]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_shard_pays_the_collection_of_each_file_it_holds_part_of_in_front_of_its_workers(workers):
    tests = [f"t.py::t{n}" for n in range(6)]
    plan = plan_items(tests, dict.fromkeys(tests, 1.0), 2, collection={"t.py": 4.0}, workers=workers)
    # the one file is cut between the two shards: each collects it, every worker before its first test
    assert all(s.items for s in plan.shards)
    for shard in plan.shards:
        own = dict.fromkeys(shard.items, 1.0)
        assert shard.estimated_seconds == pytest.approx(
            4.0 + shard_seconds(list(own), own, workers, frozenset(shard.spread))
        )


@given(
    st.dictionaries(
        st.sampled_from([f"tests/test_{c}.py::t{n}" for c in "abcd" for n in range(4)]),
        st.floats(0.01, 10),  # the planner prices an item at 1 ms at least
        min_size=1,
    ),
    st.dictionaries(st.sampled_from([f"tests/test_{c}.py" for c in "abcde"]), st.floats(0, 10)),
    st.integers(1, 3),
    st.integers(1, 4),
)
def test_every_shards_estimate_is_its_tests_plus_the_collection_of_its_files(seconds, collection, shards, workers):
    plan = plan_items(list(seconds), seconds, shards, collection=collection, workers=workers)
    for shard in plan.shards:
        files = {item.split("::")[0] for item in shard.items}
        # whole microseconds, as the planner prices items: xdist's order is decided by ties, which a float's
        # residue below a microsecond tips (shard_seconds is not continuous in the seconds)
        own = {item: round(seconds[item] * 1e6) / 1e6 for item in shard.items}
        tests = shard_seconds(list(own), own, workers, frozenset(shard.spread))
        expected = sum(collection.get(f, 0.0) for f in files) + tests
        assert shard.estimated_seconds == pytest.approx(expected, abs=1e-4)  # whole microseconds per item
    assert collection_lumps(sorted(seconds), {}) == {}
