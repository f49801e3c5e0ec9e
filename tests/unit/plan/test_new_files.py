"""Files without timings estimated from the tests they define: the cost per test learned from the
timed files, else the default per test that ``--pytest`` gives a test without timing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_shards.cli import main
from ci_shards.model.plan import Plan
from ci_shards.plan.discover import discover_items, merge_with_timings
from ci_shards.plan.estimates import DEFAULT_UNKNOWN_SECONDS
from ci_shards.plan.new_files import EMPTY_FILE_TESTS, LEARN_FROM_FILES, estimate_new_files, learned_cost_per_test
from ci_shards.plan.static_count import FileCount
from ci_shards.timings.store import TimingsStore


def test_no_timings_at_all_each_test_costs_the_default():
    counts = {"a.py": FileCount(300), "b.py": FileCount(3), "helpers_test.py": FileCount(0)}
    new = estimate_new_files(sorted(counts), counts.get, timed={}, fallback_seconds=1.0)
    assert new.seconds == {
        "a.py": 300 * DEFAULT_UNKNOWN_SECONDS,
        "b.py": 3 * DEFAULT_UNKNOWN_SECONDS,
        "helpers_test.py": EMPTY_FILE_TESTS * DEFAULT_UNKNOWN_SECONDS,  # its import: never zero
    }
    assert new.notes == (
        "3 test files without timings estimated from the tests each defines (303 tests counted,"
        " 1 file with none counted as 0.1 test) at 1.0 s per test (no file has timings: the default, as --pytest"
        " estimates each test it has no timing for): a.py, b.py, helpers_test.py",
    )


def test_the_cost_per_test_is_learned_from_the_timed_files():
    counts = {"t1.py": FileCount(10), "t2.py": FileCount(4), "t3.py": FileCount(1), "empty.py": FileCount(0)}
    counts |= {"new.py": FileCount(20, guessed=1)}
    timed = {"t1.py": 1.0, "t2.py": 2.0, "t3.py": 0.2, "empty.py": 0.3}  # 0.1, 0.5 and 0.2 s per test
    assert learned_cost_per_test(timed, counts.get) == (0.2, 3)
    new = estimate_new_files(["new.py"], counts.get, timed=timed, fallback_seconds=0.3)
    assert new.seconds == {"new.py": pytest.approx(4.0)}
    assert new.notes[0] == (
        "1 test file without timings estimated from the tests each defines (20 tests counted,"
        " 1 parametrize argument list not literal in 1 file counted as 4 cases) at 0.2 s per test (learned: the"
        " median over 3 timed files): new.py"
    )


def test_learning_counts_a_bounded_spread_of_the_timed_files():
    asked: list[str] = []

    def count_of(file: str) -> FileCount:
        asked.append(file)
        return FileCount(2)

    timed = {f"t{i:04}.py": 1.0 for i in range(1000)}
    assert learned_cost_per_test(timed, count_of) == (0.5, LEARN_FROM_FILES)
    assert len(asked) == LEARN_FROM_FILES
    assert asked[0] == "t0000.py" and asked[-1] == "t0990.py"  # spread over the whole suite


def test_unreadable_and_uncounted_files_get_the_median_known_file():
    counts: dict[str, FileCount | str | None] = {"bad.py": "SyntaxError at line 3: invalid syntax", "x.test.ts": None}
    new = estimate_new_files(["bad.py", "x.test.ts"], counts.get, timed={"a.py": 7.0}, fallback_seconds=7.0)
    assert new.seconds == {"bad.py": 7.0, "x.test.ts": 7.0}
    assert new.notes == (
        "1 test file could not be read as Python, each estimated at 7.0 s (the median known file, else the"
        " default): bad.py (SyntaxError at line 3: invalid syntax)",
        "1 test file without timings planned whole, each estimated at 7.0 s (the median known file): x.test.ts",
    )


def test_discovery_estimates_files_on_disk_by_what_they_define(tmp_path: Path):
    files = {
        "tests/test_many.py": "import pytest\n@pytest.mark.parametrize('x', [1, 2, 3, 4, 5])\ndef test_a(x): pass\n",
        "tests/test_two.py": "def test_a(): pass\ndef test_b(): pass\n",
        "tests/test_none.py": "from os import sep\n",
        "tests/test_broken.py": "def test_a(:\n",
        "tests/test_latin.py": b"\xe9\xe8 = 1\n",  # not UTF-8, no declaration
        "tests/test_timed.py": "def test_a(): pass\ndef test_b(): pass\ndef test_c(): pass\ndef test_d(): pass\n",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    timings = {"tests/test_timed.py::test_a": 1.0, "tests/test_timed.py::test_b": 1.0}  # 2 s over 4 counted
    found, notes = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=[], globs=(), timings=timings)
    assert found.estimates == {
        "tests/test_many.py": pytest.approx(2.5),
        # two tests: offered by their node ids, each its share of the file (balance cuts it only if it must)
        "tests/test_two.py::test_a": pytest.approx(0.5),
        "tests/test_two.py::test_b": pytest.approx(0.5),
        "tests/test_none.py": pytest.approx(0.05),
        "tests/test_broken.py": 2.0,  # the median known file
        "tests/test_latin.py": 2.0,
        **timings,
    }
    assert "(7 tests counted, 1 file with none counted as 0.1 test) at 0.5 s per test (learned" in notes[1]
    assert notes[2].startswith("2 test files could not be read as Python")
    assert "tests/test_broken.py (SyntaxError at line 1:" in notes[2]
    assert "tests/test_latin.py (SyntaxError at line 1: (unicode error)" in notes[2]
    assert notes[3].startswith("1 counted file offered to balance as the node ids of the tests each defines")
    assert "tests/test_two.py" not in found.items  # its parts are, until balance names it whole again


def test_merge_without_a_counter_keeps_the_median_known_file():
    found = merge_with_timings(["a.py", "new.py"], {"a.py::t": 3.0}, lambda f: f == "a.py")
    assert found.estimates["new.py"] == 3.0


def test_the_learned_per_test_overhead_is_added_for_each_counted_test(tmp_path: Path, monkeypatch, capsys):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_timed.py").write_text("def test_a(): pass\ndef test_b(): pass\n")
    (tests / "test_new.py").write_text("".join(f"def test_{n}(): pass\n" for n in range(10)))
    store = TimingsStore().record({"tests/test_timed.py::test_a": 1.0, "tests/test_timed.py::test_b": 1.0})
    (tmp_path / "timings.json").write_text(store.record_overhead(2.0, per_test=0.25).dumps())
    monkeypatch.chdir(tmp_path)
    argv = ["plan", "--discover", "--durations", "timings.json", "--shards", "1", "--format", "json", "--", "tests"]
    assert main(argv) == 0
    plan = Plan.from_json(json.loads(capsys.readouterr().out))
    # test_new.py: 10 tests at 1 s (learned: 2 s over 2 counted) plus 0.25 s each; the timed ones 1.25 s each
    assert plan.shards[0].estimated_seconds == pytest.approx(10 * 1.25 + 2 * 1.25)


def test_fixtures_of_the_conftests_above_a_file_count_the_nearest_first(tmp_path: Path):
    fixture = "import pytest\n\n@pytest.fixture(params={params})\ndef backend(request):\n    return request.param\n"
    (tmp_path / "conftest.py").write_text(fixture.format(params="[1, 2]"))
    (tmp_path / "tests" / "sub").mkdir(parents=True)
    (tmp_path / "tests" / "conftest.py").write_text("def helper(): pass\n")  # defines no fixture
    (tmp_path / "tests" / "sub" / "conftest.py").write_text(fixture.format(params="[1, 2, 3]"))
    (tmp_path / "tests" / "test_top.py").write_text("def test_a(backend): pass\n")
    (tmp_path / "tests" / "sub" / "test_deep.py").write_text("def test_a(backend): pass\n")
    (tmp_path / "tests" / "broken").mkdir()
    (tmp_path / "tests" / "broken" / "conftest.py").write_text("def (:\n")  # pytest will say; counted without
    (tmp_path / "tests" / "broken" / "test_b.py").write_text("def test_a(backend): pass\n")
    found, _ = discover_items(cwd=tmp_path, pytest_files=True, pytest_args=["tests"], globs=(), timings={})
    assert found.estimates == {"tests/test_top.py": 2.0, "tests/sub/test_deep.py": 3.0, "tests/broken/test_b.py": 2.0}


def test_examples_and_deselected_tests_weigh_in_and_the_note_counts_them():
    counts = {
        "h.py": FileCount(3, hypothesis=2, extra_units=2 * 99.0),  # 2 @given tests of 100 examples, 1 plain
        "s.py": FileCount(4, deselected=1000),  # -m deselects 1,000: collected, never run
        "all_deselected.py": FileCount(0, deselected=10),  # not a file with no tests: its collection
        "d.py": FileCount(90, guessed=2, data_sized=2),
    }
    new = estimate_new_files(sorted(counts), counts.get, timed={}, fallback_seconds=1.0)
    assert new.seconds == {
        "h.py": pytest.approx(201.0),
        "s.py": pytest.approx(4 + 1000 * 0.05),
        "all_deselected.py": pytest.approx(10 * 0.05),
        "d.py": 90.0,
    }
    assert new.notes[0].startswith(
        "4 test files without timings estimated from the tests each defines (97 tests counted,"
        " 2 hypothesis tests in 1 file at 1 test per example (max_examples, else 100), 1010 tests in 2 files that"
        " -m/-k deselect at 0.05 test each, 2 argument lists not literal in 1 file sized by the files of the data"
        " folder each names) at 1.0 s per test"
    )
    # learning divides a timed file's seconds by what it weighs, not by its bare count
    assert learned_cost_per_test({"h.py": 402.0}, counts.get) == (2.0, 1)
