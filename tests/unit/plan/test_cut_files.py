"""Which discovered files balance may plan apart, and what each part is estimated at."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_shards.plan.cut_files import cuttable, file_parts
from ci_shards.plan.static_count import FileCount


def test_a_file_of_many_tests_is_offered_by_their_ids_sharing_its_seconds():
    count = FileCount(tests=12, parts=(("TestA::test_x", 10, 10.0), ("test_y", 1, 1.0)))
    assert file_parts("t/test_a.py", count, 24.0) == {
        # 12 counted, 11 named: the unnamed one's cost is shared, so the parts sum to the file
        "t/test_a.py::TestA::test_x": (pytest.approx(24.0 * 10 / 11), 10),
        "t/test_a.py::test_y": (pytest.approx(24.0 / 11), 1),
    }


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (FileCount(tests=1, parts=(("test_a", 1, 1.0),)), False),  # one test: nothing to cut
        (FileCount(tests=0), False),
        # click 8.5.1's stress file: 30,000 deselected cases collected by every shard a cut would make
        (FileCount(tests=24, deselected=30_000, parts=(("test_a", 12, 12.0), ("test_b", 12, 12.0))), False),
        (FileCount(tests=24, deselected=480, parts=(("test_a", 12, 12.0), ("test_b", 12, 12.0))), True),
        (FileCount(tests=2, extra_units=198.0, deselected=3000, parts=(("a", 1, 100.0), ("b", 1, 100.0))), True),
    ],
)
def test_what_may_be_cut(count: FileCount, expected: bool):
    assert cuttable(count) is expected
    parts = file_parts("f.py", count, 5.0)
    assert (set(parts) != {"f.py"}) is expected


@given(
    st.lists(st.tuples(st.integers(1, 50), st.floats(1.0, 100.0)), min_size=1, max_size=8),
    st.integers(0, 20),
    st.floats(0.0, 1000.0),
)
def test_parts_always_sum_to_the_file(cases_units: list[tuple[int, float]], unnamed: int, seconds: float):
    parts = tuple((f"test_{n}", cases, units) for n, (cases, units) in enumerate(cases_units))
    count = FileCount(tests=sum(c for c, _u in cases_units) + unnamed, deselected=0, parts=parts)
    planned = file_parts("f.py", count, seconds)
    assert sum(s for s, _t in planned.values()) == pytest.approx(seconds)
    assert all(item == "f.py" or item.startswith("f.py::") for item in planned)
    assert len(planned) == (len(parts) if len(parts) >= 2 else 1)
