"""Issue 27's wording of errors, each line as a user reads it: one line naming the file and the problem in
the words every other file's problem uses, never a line that reads as success before the error."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_shards.cli import main
from ci_shards.model.outcome import CaseOutcome, ShardStatus
from ci_shards.report.aggregate import aggregate_dirs
from ci_shards.report.render import render_terminal
from tests.unit.aggregate_fixtures import case_for, make_plan, write_shard

JENKINS = Path(__file__).resolve().parents[1] / "data" / "junit" / "weiwei__junitparser__tests__data__jenkins.xml"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "items.txt").write_text("a.py::t\nb.py::t\n")
    return tmp_path


def _err(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(list(argv))
    return code, capsys.readouterr().err.splitlines()


def test_an_output_path_under_a_regular_file_names_the_file(here: Path, capsys) -> None:
    (here / "notes.txt").write_text("x")
    code, err = _err(capsys, "plan", "--items", "items.txt", "--shards", "2", "-o", "notes.txt/sub/plan.json")
    assert code == 2
    assert err[-1] == "ci-shards: notes.txt/sub/plan.json: cannot create its folder: notes.txt is a file, not a folder"


def test_a_non_utf8_items_file_says_so_like_every_other_file(here: Path, capsys) -> None:
    (here / "bad.txt").write_bytes(b"a.py::t\n\xff\n")
    code, err = _err(capsys, "plan", "--items", "bad.txt", "--shards", "2")
    assert (code, err[-1]) == (2, "ci-shards: bad.txt: not UTF-8 text (byte 8)")


def test_a_non_utf8_outcome_json_says_so_like_every_other_file(here: Path) -> None:
    plan = make_plan([["a.py::t"]])
    folder = write_shard(here, plan, 1)
    (folder / "outcome.json").write_bytes(b'{"schema": "\xff"}')
    verdict = aggregate_dirs(plan, [here])
    assert "outcome.json is unreadable: not UTF-8 text (byte 12)" in verdict.shards[0].reason
    assert "codec" not in verdict.shards[0].reason


def test_junit_merge_with_a_broken_input_does_not_read_as_success_first(here: Path, capsys) -> None:
    (here / "broken.xml").write_text("<bad")
    code, err = _err(capsys, "junit", "merge", str(JENKINS), "broken.xml", "-o", "m.xml")
    assert code == 2
    assert err == [
        "ci-shards: merged 1 file, 3 tests into m.xml; 1 unreadable file left out:",
        "ci-shards: broken.xml: not valid XML at line 1, column 1 (unclosed token)",
    ]


def test_a_cut_list_points_only_at_reports_that_were_written(here: Path, capsys) -> None:
    items = [f"tests/test_a.py::test_{i}" for i in range(12)]
    plan = make_plan([items])
    (here / "plan.json").write_text(plan.dumps())
    write_shard(here / "shards", plan, 1, [case_for(i, CaseOutcome.FAILED) for i in items])
    code, err = _err(capsys, "aggregate", "--plan", "plan.json", "shards")
    assert code == 1
    cut = [line for line in err if "… and 2 more" in line]
    assert cut == ["  … and 2 more (see the shard folders' failures.jsonl (or rerun with --failures FILE))"]
    code, err = _err(capsys, "aggregate", "--plan", "plan.json", "shards", "--failures", "f.jsonl")
    assert "  … and 2 more (see f.jsonl)" in err


def test_a_never_started_shards_row_counts_errors_as_the_headline_does(tmp_path: Path) -> None:
    # its planned items are errors in the headline ("7 errors"); the row said "failed 7"
    plan = make_plan([["a.py::t"], [f"b.py::t{i}" for i in range(7)]])
    write_shard(tmp_path, plan, 1)
    write_shard(
        tmp_path,
        plan,
        2,
        [case_for(f"b.py::t{i}", CaseOutcome.ERROR, message="never started") for i in range(7)],
        status=ShardStatus.NEVER_STARTED,
    )
    text = render_terminal(aggregate_dirs(plan, [tmp_path]))
    header, row = (line for line in text.splitlines() if "status" in line or line.lstrip().startswith("2/2"))
    assert header.split()[:6] == ["shard", "status", "tests", "failed", "errors", "flaky"]
    assert row.split()[1:5] == ["never-started", "7", "0", "7"]
    assert "7 errors" in text.splitlines()[0]  # the row and the headline say the same


@pytest.mark.parametrize(
    ("outcomes", "said"),
    [
        ([CaseOutcome.ERROR] * 7, "7 errors, first: t.py::t0"),
        ([CaseOutcome.FAILED, CaseOutcome.ERROR], "1 failed, 1 error, first: t.py::t0"),
        ([CaseOutcome.FAILED] * 2, "2 tests failed, first: t.py::t0"),
    ],
)
def test_a_shards_reason_counts_failed_and_errors_as_the_headline_does(outcomes, said) -> None:
    from ci_shards.run.classify import Policy, _failed_or_passed  # noqa: PLC0415

    problems: list[str] = []
    cases = [case_for(f"t.py::t{i}", outcome) for i, outcome in enumerate(outcomes)]
    status = _failed_or_passed(
        first=[], merged=cases, collect_errors=[], report_problems=[], not_run=[], problems=problems, policy=Policy()
    )
    assert status is ShardStatus.FAILED and problems == [said]


def test_an_aggregate_output_it_cannot_write_is_the_last_line_of_its_exit_2(here: Path, capsys) -> None:
    # found by tests/unit/test_cli_fuzz.py: the error was said first, then the verdict, so exit 2 seemed to be
    # about a verdict that read as a plain test failure
    plan = make_plan([["a.py::t"]])
    (here / "plan.json").write_text(plan.dumps())
    write_shard(here / "shards", plan, 1)
    (here / "taken").mkdir()
    code, err = _err(capsys, "aggregate", "--plan", "plan.json", "shards", "--summary", "taken")
    assert code == 2
    assert err[0] == "error: taken: cannot write: Is a directory"
    assert err[-1] == "ci-shards: taken: cannot write: Is a directory"
    code, err = _err(capsys, "aggregate", "--plan", "plan.json", "shards", "--summary", "taken", "--junit-out", "taken")
    assert (code, err[-1]) == (2, "ci-shards: taken: cannot write: Is a directory (and 1 more above)")


DEEP = "[" * 50_000 + "]" * 50_000
LONG_NUMBER = '{"a": ' + "9" * 5_000 + "}"


@pytest.mark.parametrize(
    "case",
    [
        ("plan.json", DEEP, ["aggregate", "--plan", "plan.json", "shards"], "plan.json: not valid JSON at line 1"),
        ("plan.json", LONG_NUMBER, ["matrix", "--plan", "plan.json"], "plan.json: not valid JSON at line 1, column 7"),
        ("d.json", DEEP, ["timings", "merge", "d.json", "-o", "-"], "d.json: not valid JSON at line 1, column 50000"),
        ("d.json", LONG_NUMBER, ["plan", "--items", "items.txt", "--durations", "d.json"], "a number of more than"),
        ("coverage.json", DEEP, ["coverage", "status"], "coverage.json: "),
        ("ci-shards.yml", "a: " + DEEP, ["plan", "--items", "items.txt"], "ci-shards.yml: not valid YAML: nested too"),
        ("ci-shards.yml", "shards: 2001-13-45\n", ["plan", "--items", "items.txt"], "month must be in 1..12"),
        ("pyproject.toml", "[tool.ci-shards]\nx = " + DEEP, ["plan", "--items", "items.txt"], "not valid TOML: nested"),
        ("pyproject.toml", "[tool.pytest.ini_options]\nx = " + "9" * 5_000, ["plan", "--discover"], "pytest settings"),
        ("pyproject.toml", "[project]\nname = " + DEEP, ["init", "--dry-run"], "pyproject.toml: cannot read"),
    ],
)
def test_a_document_too_deep_or_with_a_too_long_number_is_named(here: Path, capsys, case) -> None:
    # found by tests/unit/test_cli_fuzz.py: each was an internal error (RecursionError, ValueError: exit 3)
    name, text, argv, said = case
    (here / name).write_text(text)
    code, err = _err(capsys, *argv)
    assert code == 2, err
    assert err[-1].startswith("ci-shards: ") and said in err[-1], err[-1]


def test_a_pyproject_whose_tool_is_no_table_is_no_pytest_settings(here: Path, capsys) -> None:
    (here / "pyproject.toml").write_text('tool = "x"\n[project]\nname = "p"\n')
    (here / "test_a.py").write_text("def test_a():\n    pass\n")
    code, err = _err(capsys, "plan", "--discover", "--shards", "1")
    assert code == 0, err
