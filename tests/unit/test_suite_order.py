"""tests/suite_order.py: the order pytest-xdist deals this suite in (the longest units first) loses no test,
keeps a unit together and in collection order, and reads a missing or broken durations file as no timings."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.suite_order import longest_first, read_durations, unit_of, write_durations

UNITS = st.sampled_from(["tests/a.py", "tests/b.py", "tests/d/e.py", "tests/f.py", "tests/c.py"])


@settings(max_examples=80)
@given(
    units=st.lists(UNITS, max_size=30),
    known=st.lists(st.one_of(st.none(), st.floats(0, 100, allow_nan=False)), min_size=30, max_size=30),
)
def test_the_order_is_every_test_once_units_together_heaviest_first(units: list[str], known: list[float | None]):
    entries = [(f"{unit}::t{n}", unit) for n, unit in enumerate(units)]
    seconds = {nodeid: value for (nodeid, _u), value in zip(entries, known, strict=False) if value is not None}
    order = longest_first(entries, seconds)
    assert sorted(order) == list(range(len(entries)))  # a permutation: nothing lost, nothing twice
    dealt = [entries[i][1] for i in order]
    runs = [unit for n, unit in enumerate(dealt) if n == 0 or dealt[n - 1] != unit]
    assert len(runs) == len(set(runs))  # each unit in one stretch
    for unit in runs:
        assert [i for i in order if entries[i][1] == unit] == [i for i, e in enumerate(entries) if e[1] == unit]
    unknown = statistics.median(seconds.values()) if seconds else 0.0
    weights = [sum(seconds.get(e[0], unknown) for e in entries if e[1] == unit) for unit in runs]
    assert weights == sorted(weights, reverse=True)


def test_an_unrecorded_test_weighs_the_median_so_a_long_known_unit_still_goes_first() -> None:
    entries = [
        ("tests/new.py::a", "tests/new.py"),
        ("tests/old.py::b", "tests/old.py"),
        ("tests/x.py::c", "tests/x.py"),
    ]
    seconds = {"tests/old.py::b": 30.0, "tests/x.py::c": 1.0, "tests/y.py::d": 2.0}
    assert longest_first(entries, seconds) == [1, 0, 2]  # old 30 s, new the median 2 s, x 1 s


def test_a_unit_is_the_module_as_loadfile_splits_it() -> None:
    assert unit_of("tests/e2e/test_x.py::test_a[1]") == "tests/e2e/test_x.py"
    assert unit_of("tests/e2e/test_x.py::TestC::test_a[a::b]") == "tests/e2e/test_x.py"


def test_the_durations_file_merges_and_a_broken_one_is_no_timings(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    assert read_durations(path) == {}
    write_durations(path, {"t::a": 1.23456, "t::b": 2.0})
    write_durations(path, {"t::b": 3.0})
    assert read_durations(path) == {"t::a": 1.235, "t::b": 3.0}
    assert [p.name for p in tmp_path.iterdir()] == ["durations.json"]  # no temporary file left behind
    for broken in ("[1, 2]", "{", '{"t::a": "slow", "t::b": -1, "t::c": 4}'):
        path.write_text(broken)
        assert read_durations(path) == ({"t::c": 4.0} if "t::c" in broken else {})
    path.write_text(json.dumps({"t::a": True}))
    assert read_durations(path) == {}  # true is no number of seconds (bool is an int in Python)
