"""Narrowing to the tests, not the test files (issue 24): the per-test map's contexts, which planned items
they speak for, and the decision with a per-test map (docs/selection.md, "Narrowing by executed code")."""

from __future__ import annotations

import pytest

from ci_shards.coverage.artifact import SHARED_CONTEXT, FileCoverage
from ci_shards.coverage.context_map import group, table
from ci_shards.coverage.fold_contexts import ContextReader
from ci_shards.select import maps as select_maps
from ci_shards.select.decide import Selection, decide
from ci_shards.select.diff import ChangedFile, ChangeKind
from ci_shards.select.maps import CoverageMap, FileLines, TouchfilesMap, coverage_lines
from ci_shards.select.narrow import Confined, FunctionBody
from ci_shards.select.recorded import RecordedTests
from ci_shards.select.settings import SelectionSettings
from ci_shards.select.shared_state import shares_state

RECORDED = RecordedTests.of(["t/a.py::test_one", "t/a.py::C::test_p[x::y]", "t/b.py"])


@pytest.mark.parametrize(
    ("item", "speaks"),
    [
        ("t/a.py::test_one", True),  # the same id
        ("t/a.py", True),  # the file holds a recorded test
        ("t/a.py::C", True),
        ("t/a.py::C::test_p", True),  # the parametrized function holds its case
        ("t/a.py::C::test_p[x::y]", True),
        ("t/a.py::test_two", False),
        ("t/a.py::test_one_more", False),  # a longer name is another test
        ("t/b.py::test_any[1]", True),  # the file's own context holds every test of the file
        ("t/c.py", False),
    ],
)
def test_recorded_contexts_speak_for_the_items_that_hold_them_or_they_hold(item: str, speaks: bool) -> None:
    assert RECORDED.speak_for(item) is speaks


def test_the_fold_keeps_each_context_and_sets_aside_collection_and_shared_fixtures() -> None:
    reader = ContextReader()
    for context, lines in [("t/a.py::t1", [3]), ("", [3]), ("t/a.py::t2", [4]), ("t/a.py", [4]), (SHARED_CONTEXT, [5])]:
        reader.add("a.py", context, lines)
    table = reader.table()
    found = reader.file_map(["a.py"], table)
    assert found.groups.expand() == {"t/a.py::t1": (3,), "t/a.py::t2": (4,), "t/a.py": (4,)}
    assert found.unattributed == {3, 5} and found.test_files == {"t/a.py": {3, 4}}
    assert table == ("t/a.py", "t/a.py::t1", "t/a.py::t2")


def test_the_artifact_keeps_per_test_lines_and_reads_files_without_them() -> None:
    entry = {"sha256": "s", "executed_lines": [1, 2], "missed_lines": [], "test_files": {"t/a.py": [2]}}
    assert FileCoverage.from_json("a.py", entry).context_lines is None
    old = FileCoverage.from_json("a.py", {**entry, "tests": {"t/a.py::t": [2]}})  # before the context table
    assert old.context_lines is not None and old.context_lines.expand() == {"t/a.py::t": (2,)}
    assert old.to_json()["context_lines"] == [["2", "0"]]
    read = coverage_lines({"files": {"a.py": old.to_json()}, "contexts": ["0:t/a.py::t"]})["a.py"].tests
    assert read is not None and read.expand() == {"t/a.py::t": (2,)}


_CONTEXTS = {"t/a.py::test_f": [6], "t/a.py::test_g": [9], "t/b.py": [6], "t/c.py::x": [9]}
PER_TEST = FileLines(
    {"t/a.py": frozenset({6, 9}), "t/b.py": frozenset({6}), "t/c.py": frozenset({9})},
    frozenset({1}),
    group(_CONTEXTS, table(_CONTEXTS)),
)
COVERAGE = CoverageMap(
    executed_by={"pkg/m.py": ("s1", frozenset({"t/a.py", "t/b.py", "t/c.py"}))},
    unmeasured={},
    base_sha256={"pkg/m.py": "s1"},
    lines={"pkg/m.py": PER_TEST},
    tests_ran=frozenset({"t/c.py::quiet"}),  # ran on the base, executed no measured line: no context
)
BODY_OF_F = Confined((FunctionBody(qualname="f", line=3, header=4, first=5, last=7),))


def test_a_per_test_map_answers_the_contexts_that_ran_the_body() -> None:
    answer = COVERAGE.narrow("pkg/m.py", BODY_OF_F)
    assert not isinstance(answer, str) and answer.ran is not None and answer.measured_ids is not None
    assert answer.ran.ids == {"t/a.py::test_f", "t/b.py"}
    assert answer.tests == {"t/a.py", "t/b.py"}
    assert answer.measured_ids.ids == {"t/a.py::test_f", "t/a.py::test_g", "t/b.py", "t/c.py::x", "t/c.py::quiet"}


class ImportMap:
    name = "import"

    def tests_for(self, path: str) -> frozenset[str] | None:
        return frozenset({"t/a.py", "t/b.py", "t/c.py", "t/tf.py"}) if path.startswith("pkg/") else None


ITEMS = [
    "t/a.py::test_f",  # ran f
    "t/a.py::test_g",  # ran the file, not f
    "t/a.py::test_new",  # no context on the base (new, or skipped): kept
    "t/b.py::test_h",  # its file's own context (a module fixture) ran f: the whole file
    "t/b.py::test_i",
    "t/c.py::x",  # never ran f
    "t/c.py::quiet",  # ran on the base, executed nothing measured
    "t/c.py::brand_new",  # no context, not run on the base: kept, in a file that never ran f
    "t/tf.py::test_t",  # touchfiles: a declared dependency
]


def narrowed_decision(
    items: list[str], *maps: select_maps.TestMap, shared_state: frozenset[str] = frozenset()
) -> Selection:
    """``decide`` for a change to ``pkg/m.py`` inside ``f``, narrowed by the per-test map ``COVERAGE``."""
    narrowed = COVERAGE.narrow("pkg/m.py", BODY_OF_F)
    assert not isinstance(narrowed, str)
    return decide(
        items,
        item_paths={i: i.split("::")[0] for i in items},
        changed=[ChangedFile(ChangeKind.MODIFIED, "pkg/m.py")],
        maps=[ImportMap(), *maps],
        settings=SelectionSettings(),
        narrowing={"pkg/m.py": narrowed},
        shared_state=shared_state,
    )


def test_decide_keeps_the_tests_that_ran_the_body_not_their_whole_files() -> None:
    touchfiles = TouchfilesMap(rules={"t/tf.py": ("pkg/m.py",)}, test_files=frozenset({"t/tf.py"}))
    chosen = narrowed_decision(ITEMS, touchfiles)
    assert chosen.selected == (
        "t/a.py::test_f",
        "t/a.py::test_new",
        "t/b.py::test_h",
        "t/b.py::test_i",
        "t/c.py::brand_new",
        "t/tf.py::test_t",
    )
    reason = "coverage: did not execute `pkg.m.f` on base"
    assert chosen.skipped == {"t/a.py::test_g": reason, "t/c.py::x": reason, "t/c.py::quiet": reason}
    assert (
        "coverage narrowed pkg/m.py to 3 of 4 test files, then to the tests that ran it"
        " (the changed code is inside `pkg.m.f`)" in chosen.lines
    )


def test_a_test_file_item_is_kept_whole_when_one_of_its_tests_ran_the_body() -> None:
    chosen = narrowed_decision(["t/a.py", "t/b.py", "t/c.py"])
    assert chosen.selected == ("t/a.py", "t/b.py")


@pytest.mark.parametrize(
    ("source", "shares"),
    [
        ("def test_a():\n    global RESULT\n    RESULT = 1\n", True),
        ("SEEN = []\n\ndef test_a():\n    SEEN.append(1)\n", True),
        ("CACHE = {}\n\nclass TestX:\n    def test_a(self):\n        CACHE['k'] = 1\n", True),
        ("STATE = object()\n\ndef test_a():\n    STATE.value = 2\n", True),
        (
            "CASES = [1, 2]\n\ndef test_a():\n    seen = []\n    seen.append(CASES[0])\n    assert CASES.count(1)\n",
            False,
        ),
        ("def test_a(tmp_path):\n    tmp_path.joinpath('x').write_text('')\n", False),
        ("def test_a(:\n", True),  # does not parse: assume it does
    ],
    ids=["global", "module-list", "module-dict-in-method", "module-attribute", "reads-only", "params", "unparsable"],
)
def test_a_test_file_that_keeps_state_in_its_module_is_told_apart(source: str, shares: bool) -> None:
    assert shares_state(source) is shares


def test_a_file_whose_tests_may_share_state_is_kept_whole_when_one_ran_the_body() -> None:
    chosen = narrowed_decision(ITEMS, shared_state=frozenset({"t/a.py", "t/c.py"}))  # t/c.py never ran f: by test
    assert "t/a.py::test_g" in chosen.selected and "t/c.py::x" in chosen.skipped
