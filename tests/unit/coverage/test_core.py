"""The pure cores of coverage across shards: completeness, paths, query, freshness, gate, writers, diff."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_shards.coverage.artifact import (
    Completeness,
    CoverageArtifact,
    FileCoverage,
    Function,
    ShardCoverage,
    ShardState,
)
from ci_shards.coverage.diffcov import base_ref, changed_lines, diff_coverage
from ci_shards.coverage.fold import relative_to_root, shard_state
from ci_shards.coverage.query import Answer, freshness, query_line
from ci_shards.coverage.summary import gate, ranges, render_section
from ci_shards.coverage.v8 import countable, script_lines
from ci_shards.coverage.writers import cobertura, lcov
from ci_shards.model.outcome import Outcome, ShardStatus

SHA_A = "a" * 64
SHA_B = "b" * 64


def _file(path: str = "pkg/a.py", **kw: object) -> FileCoverage:
    base: dict[str, object] = {
        "path": path,
        "sha256": SHA_A,
        "executed": (1, 2, 3, 5),
        "missed": (6, 7),
        "excluded": {9: "matches the exclusion pattern '# pragma: no cover'"},
        "branches_executed": ((2, 3),),
        "branches_missed": ((2, 5),),
        "functions": (Function(name="f", start=2, end=7), Function(name="f.<locals>.g", start=3, end=4)),
        "test_files": {"tests/test_a.py": (2, 3), "tests/test_b.py": (3,)},
        "shards": (1, 2),
    }
    base.update(kw)
    return FileCoverage(**base)  # type: ignore[arg-type]


def _artifact(*, missing: int = 0, files: tuple[FileCoverage, ...] | None = None, **kw: object) -> CoverageArtifact:
    shards = [ShardCoverage(index=i, state=ShardState.FOLDED) for i in range(1, 5)]
    if missing:
        shards[missing - 1] = ShardCoverage(index=missing, state=ShardState.NEVER_STARTED)
    base: dict[str, object] = {
        "created_at": "2026-01-01T00:00:00Z",
        "commit": "0123456789abcdef",
        "plan_digest": "sha256:x",
        "tool": "coverage.py",
        "tool_version": "7.17.5",
        "branch": True,
        "completeness": Completeness(total=4, shards=tuple(shards)),
        "files": files if files is not None else (_file(),),
        "unmeasured": {"pkg/unused.py": SHA_B},
    }
    base.update(kw)
    return CoverageArtifact(**base)  # type: ignore[arg-type]


# completeness -------------------------------------------------------------------------------


def test_complete_label_names_shards_and_commit() -> None:
    assert _artifact().label == "complete (4/4 shards) @0123456789ab"


def test_partial_label_names_the_missing_shard_and_has_no_percentage() -> None:
    artifact = _artifact(missing=2)
    assert artifact.label == "partial (3/4 — shard 2 never started)"
    assert artifact.percent is None
    assert artifact.to_json()["totals"]["percent"] is None
    assert artifact.to_json()["state"] == "partial"


def test_artifact_round_trips_through_json() -> None:
    artifact = _artifact(missing=3)
    assert CoverageArtifact.from_json(artifact.to_json()) == artifact


def _outcome(status: ShardStatus, coverage: dict[str, object] | None, not_run: tuple[str, ...] = ()) -> Outcome:
    return Outcome(plan_digest="d", shard_index=1, shard_total=2, status=status, coverage=coverage, not_run=not_run)


@pytest.mark.parametrize(
    ("planned", "outcome", "state"),
    [
        (0, None, ShardState.EMPTY),
        (3, None, ShardState.NEVER_STARTED),
        (3, _outcome(ShardStatus.NEVER_STARTED, None), ShardState.NEVER_STARTED),
        (3, _outcome(ShardStatus.PASSED, None), ShardState.NO_COVERAGE),
        (3, _outcome(ShardStatus.PASSED, {"problem": "no coverage data was written"}), ShardState.LOST),
        (3, _outcome(ShardStatus.TIMED_OUT, {"problem": ""}), ShardState.INCOMPLETE),
        (3, _outcome(ShardStatus.FAILED, {"problem": ""}, not_run=("t.py",)), ShardState.INCOMPLETE),
        (3, _outcome(ShardStatus.FAILED, {"problem": ""}), ShardState.FOLDED),  # failing tests still ran
        (3, _outcome(ShardStatus.SKIPPED_BY_DIFF, None), ShardState.EMPTY),
    ],
)
def test_shard_state(planned: int, outcome: Outcome | None, state: ShardState) -> None:
    assert shard_state(index=1, planned=planned, outcome=outcome).state is state


def test_listed_data_files_that_are_gone_make_the_shard_lost() -> None:
    outcome = _outcome(ShardStatus.PASSED, {"problem": ""})
    state = shard_state(index=2, planned=3, outcome=outcome, missing="1 of 1 coverage data files ... are not in x")
    assert state.state is ShardState.LOST and state.detail.startswith("1 of 1 coverage data files")


def test_a_shards_problem_text_stays_one_inert_line() -> None:
    outcome = _outcome(ShardStatus.PASSED, {"problem": "lost\n::error::injected\x1b[31m"})
    state = shard_state(index=1, planned=1, outcome=outcome)
    assert state.state is ShardState.LOST and state.detail == "lost ::error::injected"


def test_outcome_keeps_its_coverage_entry_and_omits_it_without_coverage() -> None:
    entry = {"tool": "coverage.py", "problem": ""}
    with_it = _outcome(ShardStatus.PASSED, entry)
    assert Outcome.from_json(with_it.to_json()).coverage == entry
    assert "coverage" not in _outcome(ShardStatus.PASSED, None).to_json()


# paths --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "root", "expected"),
    [
        ("pkg/a.py", "/runner/a", "pkg/a.py"),
        ("/runner/a/pkg/a.py", "/runner/a", "pkg/a.py"),
        ("/home/x/other/pkg/a.py", "/runner/a", None),
        ("/runner/ab/pkg.py", "/runner/a", None),
        ("../outside.py", "/r", None),
        ("pkg/../../outside.py", "/r", None),
        ("pkg/./sub/../b.py", "/r", "pkg/b.py"),
        ("/r/dir with space/ünï.py", "/r", "dir with space/ünï.py"),
        ("C:\\runner\\a\\pkg\\a.py", "C:\\runner\\a", "pkg/a.py"),
        ("D:/elsewhere.py", "C:/runner", None),
    ],
)
def test_relative_to_root(path: str, root: str, expected: str | None) -> None:
    assert relative_to_root(path, root) == expected


@given(st.lists(st.sampled_from(["a", "..", ".", "b c", "é", ""]), min_size=1, max_size=6))
def test_relative_to_root_never_escapes(parts: list[str]) -> None:
    result = relative_to_root("/".join(parts) or ".", "/root")
    assert result is None or not (result.startswith("../") or result == ".." or result.startswith("/"))


# query --------------------------------------------------------------------------------------


def _ask(artifact: CoverageArtifact, line: int, *, path: str = "pkg/a.py", digest: str | None = SHA_A) -> Answer:
    return query_line(artifact, path, line, digest=digest, lines_now=10).answer


def test_executed_names_the_innermost_function_and_test_files() -> None:
    answer = query_line(_artifact(), "pkg/a.py", 3, digest=SHA_A, lines_now=10)
    assert answer.answer is Answer.EXECUTED
    assert answer.function == "f.<locals>.g"
    assert answer.test_files == ("tests/test_a.py", "tests/test_b.py")
    assert answer.actionable


def test_answers_by_line() -> None:
    artifact = _artifact()
    assert _ask(artifact, 6) is Answer.NOT_EXECUTED
    assert _ask(artifact, 9) is Answer.EXCLUDED
    assert _ask(artifact, 4) is Answer.NO_COVERAGE  # no statement there
    assert _ask(artifact, 40) is Answer.NO_COVERAGE


def test_changed_file_is_stale_and_says_how_to_recollect() -> None:
    answer = query_line(_artifact(), "pkg/a.py", 3, digest=SHA_B, lines_now=10)
    assert answer.answer is Answer.STALE
    assert not answer.actionable
    assert "re-collect" in answer.text()


def test_gone_file_is_stale_missing() -> None:
    assert _ask(_artifact(), 3, digest=None) is Answer.STALE_MISSING


def test_unmeasured_file_is_no_coverage_until_it_changes() -> None:
    artifact = _artifact()
    assert _ask(artifact, 1, path="pkg/unused.py", digest=SHA_B) is Answer.NO_COVERAGE
    assert _ask(artifact, 1, path="pkg/unused.py", digest=SHA_A) is Answer.STALE  # changed after collection
    assert _ask(artifact, 1, path="pkg/new.py", digest=SHA_A) is Answer.STALE  # newer than the coverage


def test_not_executed_in_partial_coverage_is_not_actionable() -> None:
    answer = query_line(_artifact(missing=2), "pkg/a.py", 6, digest=SHA_A, lines_now=10)
    assert answer.answer is Answer.NOT_EXECUTED
    assert not answer.actionable
    assert "partial" in answer.detail


def test_freshness_counts_changed_and_gone() -> None:
    artifact = _artifact()
    assert freshness(artifact, {"pkg/a.py": SHA_A, "pkg/unused.py": SHA_B}).text() == "FRESH\n"
    stale = freshness(artifact, {"pkg/a.py": SHA_B, "pkg/unused.py": None})
    assert stale.text().startswith("STALE: 2 of 2 files changed since 2026-01-01T00:00:00Z (1 gone)")


# gate and summary ---------------------------------------------------------------------------


def test_fail_under_on_complete_and_partial_coverage() -> None:
    complete = _artifact()  # (4 lines + 1 branch) / (6 statements + 2 branches) = 62.5 %
    assert complete.percent == 62.5
    assert gate(complete, 60) == ""
    assert "below 70" in gate(complete, 70)
    assert "cannot be checked" in gate(_artifact(missing=1), 10)
    assert gate(complete, None) == ""


@given(st.integers(min_value=1, max_value=4))
def test_partial_section_never_shows_a_percentage(missing: int) -> None:
    text = render_section(_artifact(missing=missing), diff=None, diff_skipped="no base")
    assert not re.search(r"\d\s*%", text)
    assert "partial" in text


def test_complete_section_has_total_packages_and_changed_lines() -> None:
    artifact = _artifact()
    diff = diff_coverage(artifact, {"pkg/a.py": {3, 4, 6}, "README.md": {1}}, base="origin/main")
    text = render_section(artifact, diff=diff)
    assert "62.50 %" in text and "Per package (1)" in text
    assert "**50.0 %** (1/2)" in text and "`pkg/a.py`: 6" in text


def test_ranges() -> None:
    assert ranges([7, 3, 5, 6, 10]) == "3, 5-7, 10"
    assert ranges([]) == ""


# writers ------------------------------------------------------------------------------------


def test_cobertura_is_valid_xml_with_the_same_lines() -> None:
    root = ET.fromstring(cobertura(_artifact(files=(_file(path="dir with space/ü & <x>.py"),))))
    assert root.get("lines-valid") == "6" and root.get("lines-covered") == "4"
    cls = root.find(".//class")
    assert cls is not None and cls.get("filename") == "dir with space/ü & <x>.py"
    hits = {int(e.get("number", 0)): int(e.get("hits", 0)) for e in root.iter("line")}
    assert hits == {1: 1, 2: 1, 3: 1, 5: 1, 6: 0, 7: 0}
    assert root.get("ci-shards-state") == "complete"


def test_partial_files_are_marked() -> None:
    partial = _artifact(missing=4)
    assert 'ci-shards-state="partial"' in cobertura(partial)
    assert "TN:ci_shards_partial_3_of_4" in lcov(partial)


def test_lcov_records() -> None:
    text = lcov(_artifact())
    assert "SF:pkg/a.py" in text and "DA:6,0" in text and "DA:5,1" in text
    assert "LF:6" in text and "LH:4" in text and "BRF:2" in text and "BRH:1" in text
    assert "FN:2,7,f" in text and "FNDA:1,f" in text
    assert text.endswith("end_of_record\n")


# diff ---------------------------------------------------------------------------------------

DIFF = """diff --git a/pkg/a.py b/pkg/a.py
--- a/pkg/a.py
+++ b/pkg/a.py
@@ -3,0 +4,2 @@ def f():
+    x = 1
+    y = 2
@@ -10 +12 @@
-old
+new
diff --git a/gone.py b/gone.py
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
diff --git "a/sp ace/\\303\\274.py" "b/sp ace/\\303\\274.py"
--- "a/sp ace/\\303\\274.py"
+++ "b/sp ace/\\303\\274.py"
@@ -1 +1 @@
-a
+b
"""


def test_changed_lines_new_side_only() -> None:
    assert changed_lines(DIFF) == {"pkg/a.py": {4, 5, 12}, "sp ace/ü.py": {1}}


def test_base_ref() -> None:
    assert base_ref("main", {"GITHUB_BASE_REF": "dev"}) == "main"
    assert base_ref(None, {"GITHUB_BASE_REF": "dev"}) == "origin/dev"
    assert base_ref(None, {}) is None


# V8 ranges -> lines ---------------------------------------------------------------------------

JS = """// comment
function add(a, b) {
  if (a < 0) {
    return 0;
  }
  return a + b;
}

module.exports = { add };
"""


def _offset(line: int, column: int = 0) -> int:
    return sum(len(text) + 1 for text in JS.split("\n")[: line - 1]) + column


def test_v8_ranges_become_lines_and_functions() -> None:
    functions = [
        {"functionName": "", "ranges": [{"startOffset": 0, "endOffset": len(JS), "count": 1}]},
        {
            "functionName": "add",
            "ranges": [
                {"startOffset": _offset(2), "endOffset": _offset(7, 1), "count": 2},
                {"startOffset": _offset(3, 13), "endOffset": _offset(5, 3), "count": 0},  # the if block, never taken
            ],
        },
    ]
    lines = script_lines(JS, functions)
    assert countable(JS) == [2, 3, 4, 5, 6, 7, 9]  # no blank or comment lines
    assert dict(lines.counts) == {2: 2, 3: 2, 4: 0, 5: 0, 6: 2, 7: 2, 9: 1}
    assert lines.functions == ((Function(name="add", start=2, end=7), True),)


def test_section_stays_small_with_many_packages_and_uncovered_lines() -> None:
    files = tuple(_file(path=f"pkg{i}/m.py") for i in range(500))
    artifact = _artifact(files=files)
    changed = {f"pkg{i}/m.py": set(range(1, 5000)) for i in range(500)}
    text = render_section(artifact, diff=diff_coverage(artifact, changed, base="main"))
    assert "… and 400 more" in text and "… and 470 more files" in text
    assert len(text) < 30_000


_lines = st.sets(st.integers(min_value=1, max_value=60), max_size=30)


@given(executed=_lines, missed=_lines, line=st.integers(min_value=1, max_value=70), changed=st.booleans())
def test_query_never_vouches_for_a_changed_file_and_answers_by_the_recorded_line(
    executed: set[int], missed: set[int], line: int, changed: bool
) -> None:
    missed -= executed
    f = _file(executed=tuple(sorted(executed)), missed=tuple(sorted(missed)), excluded={}, functions=(), test_files={})
    answer = query_line(_artifact(files=(f,)), "pkg/a.py", line, digest=SHA_B if changed else SHA_A, lines_now=70)
    if changed:
        assert answer.answer is Answer.STALE and not answer.actionable
    elif line in executed:
        assert answer.answer is Answer.EXECUTED
    elif line in missed:
        assert answer.answer is Answer.NOT_EXECUTED
    else:
        assert answer.answer is Answer.NO_COVERAGE


@given(st.lists(st.tuples(_lines, _lines), min_size=1, max_size=5))
def test_cobertura_and_lcov_count_the_same_lines_as_the_artifact(pairs: list[tuple[set[int], set[int]]]) -> None:
    files = tuple(
        _file(path=f"p{i}/m.py", executed=tuple(sorted(e)), missed=tuple(sorted(m - e)), branches_executed=None,
              branches_missed=None)
        for i, (e, m) in enumerate(pairs)
    )  # fmt: skip
    artifact = _artifact(files=files, branch=False)
    root = ET.fromstring(cobertura(artifact))
    assert int(root.get("lines-valid", -1)) == artifact.totals.statements
    assert sum(int(e.get("hits", 0)) > 0 for e in root.iter("line")) == artifact.totals.executed
    text = lcov(artifact)
    assert sum(int(x[3:]) for x in re.findall(r"^LF:\d+", text, re.M)) == artifact.totals.statements
    assert sum(int(x[3:]) for x in re.findall(r"^LH:\d+", text, re.M)) == artifact.totals.executed
