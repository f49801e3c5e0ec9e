"""A --pytest plan's tests without timings, weighed by their files' text: examples and deselected tests."""

from __future__ import annotations

from pathlib import Path

from ci_shards.plan.first_weights import collected_weights, read_units
from ci_shards.plan.static_count import DESELECTED_TESTS, EXAMPLE_TESTS

IDS = [
    "t/test_h.py::TestA::test_given[1]",
    "t/test_h.py::TestA::test_given[2]",
    "t/test_h.py::TestA::test_plain",
    "t/test_h.py::test_top",
    "t/test_s.py::test_a",
    "t/test_s.py::test_b",
    "t/test_x.py::test_c",
]
UNITS = {"t/test_h.py": {"TestA::test_given": 100.0, "test_top": 20.0}}


def test_hypothesis_tests_weigh_their_examples_and_deselected_tests_their_collection() -> None:
    weights = collected_weights(IDS, timed={}, deselected={"t/test_s.py": 1000, "t/test_x.py": 2}, units_of=UNITS.get)
    assert weights.factors == {
        "t/test_h.py::TestA::test_given[1]": 100.0,
        "t/test_h.py::TestA::test_given[2]": 100.0,
        "t/test_h.py::test_top": 20.0,
        "t/test_s.py::test_a": 1 + 1000 * DESELECTED_TESTS,  # the file's first test carries it
        "t/test_x.py::test_c": 1 + 2 * DESELECTED_TESTS,
    }
    # test_s.py's collection (50 tests' worth) outweighs its 2 tests: each cut would repeat it
    assert weights.keep_whole == ("t/test_s.py",)
    assert weights.keep_whole_rules(IDS) == ("t/test_s.py",)
    assert weights.keep_whole_rules([i for i in IDS if "test_s.py" not in i]) == ()  # a selection emptied it
    odd = collected_weights(["t/x[1].py::a"], timed={}, deselected={"t/x[1].py": 100}, units_of=UNITS.get)
    assert odd.keep_whole_rules(["t/x[1].py::a"]) == ("t/x[[]1].py",)  # fnmatch matches the name itself
    assert weights.note == (
        "tests without timings weighed by their files' text: 3 hypothesis tests at 1 test per example,"
        " 1002 deselected tests at 0.05 test each, charged to its file's first test,"
        " 1 file whose collection outweighs its tests kept whole"
    )


def test_a_file_with_timings_is_not_weighed_and_nothing_to_say_says_nothing() -> None:
    # its new tests get the median of its timed ones: seconds, which factors in tests do not scale
    timed = {"t/test_h.py::TestA::test_given[1]": 2.0, "t/test_s.py": 1.0}
    weights = collected_weights(IDS, timed=timed, deselected={"t/test_s.py": 1000}, units_of=UNITS.get)
    assert weights.factors == {}
    assert collected_weights(["t/a.py::x"], timed={}, deselected={}, units_of=lambda f: None).note == ""


def test_the_edge_reads_python_files_and_skips_what_it_cannot_read(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text(
        "from hypothesis import given, strategies as st\n\nclass TestA:\n"
        "    @given(st.integers())\n    def test_x(self, x): pass\n"
    )
    (tmp_path / "test_bad.py").write_text("def test_(:\n")
    paths = {"test_a.py": str(tmp_path / "test_a.py"), "test_bad.py": str(tmp_path / "test_bad.py")}
    units_of = read_units({**paths, "doc.txt": str(tmp_path / "doc.txt"), "gone.py": str(tmp_path / "gone.py")})
    assert units_of("test_a.py") == {"TestA::test_x": 100 * EXAMPLE_TESTS}
    assert [units_of(f) for f in ("test_bad.py", "doc.txt", "gone.py", "unknown.py")] == [None] * 4
