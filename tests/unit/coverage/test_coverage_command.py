"""``ci-shards coverage query|status`` and the coverage flags of aggregate/local: answers and bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ci_shards.cli import main
from ci_shards.coverage.artifact import Completeness, CoverageArtifact, FileCoverage, ShardCoverage, ShardState
from ci_shards.coverage.publish import FIGURES
from tests.unit.aggregate_fixtures import make_plan, write_all

SOURCE = "def f():\n    return 1\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(SOURCE, encoding="utf-8")
    artifact = CoverageArtifact(
        created_at="2026-01-01T00:00:00Z",
        commit="abc",
        plan_digest="d",
        tool="coverage.py",
        tool_version="7",
        branch=False,
        completeness=Completeness(total=1, shards=(ShardCoverage(index=1, state=ShardState.FOLDED),)),
        files=(
            FileCoverage(
                path="pkg/a.py",
                sha256=hashlib.sha256(SOURCE.encode()).hexdigest(),
                executed=(1,),
                missed=(2,),
            ),
        ),
        unmeasured={},
    )
    (tmp_path / "coverage.json").write_text(artifact.dumps(), encoding="utf-8")
    return tmp_path


def test_query_text_and_json(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "query", "pkg/a.py:2"]) == 0
    assert capsys.readouterr().out.startswith("NOT EXECUTED  pkg/a.py:2\n")
    assert main(["coverage", "query", f"{repo / 'pkg' / 'a.py'}:1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == "EXECUTED"


def test_status_after_an_edit(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "status"]) == 0
    assert capsys.readouterr().out == "FRESH\n"
    (repo / "pkg" / "a.py").write_text(SOURCE + "# edit\n", encoding="utf-8")
    assert main(["coverage", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["state"] == "STALE" and status["changed"] == ["pkg/a.py"] and status["recollect"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["coverage", "query", "pkg/a.py"], "is not FILE:LINE"),
        (["coverage", "query", "pkg/a.py:0"], "is not FILE:LINE"),
        (["coverage", "query", "pkg/a.py:1", "--artifact", "nope.json"], "nope.json: no such coverage artifact"),
        (["coverage", "query", "/elsewhere/x.py:1"], "not under the repository root"),
        (["coverage", "status", "--artifact", "pkg/a.py"], "not a ci-shards coverage artifact"),
        (["aggregate", "--plan", "p.json", ".", "--fail-under", "80"], "need --coverage-out"),
        (["local", "--items", "p.json", "--shards", "1", "--fail-under", "80", "--", "true"], "need --coverage"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    repo: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if argv[0] == "aggregate":
        (repo / "p.json").write_text(make_plan([["t.py::a"]]).dumps(), encoding="utf-8")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_coverage_without_a_subcommand_prints_help(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage"]) == 2
    assert "query" in capsys.readouterr().err


def test_a_coverage_problem_never_costs_the_verdicts_summary(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = make_plan([["tests/test_a.py::test_one"]])
    (repo / "plan.json").write_text(plan.dumps(), encoding="utf-8")
    write_all(repo / "shards", plan)
    (repo / "taken").write_text("a file where the coverage folder should go", encoding="utf-8")
    argv = ["aggregate", "--plan", "plan.json", "shards", "--coverage-out", "taken", "--summary", "summary.md"]
    assert main([*argv, "--format", "json"]) == 2
    summary = (repo / "summary.md").read_text(encoding="utf-8")
    assert "ci-shards: passed" in summary and ":x: not folded:" in summary
    out, err = capsys.readouterr()
    assert "cannot write the coverage files" in err
    figures = json.loads(out)["coverage"]
    assert figures["state"] == "error" and "cannot write the coverage files" in figures["error"]
    assert set(figures) == set(FIGURES) and figures["percent"] is None  # the same keys as a fold that succeeded
    assert main(["aggregate", "--plan", "plan.json", "shards", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["coverage"] is None  # not asked for: not folded


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ({"contexts": "x"}, "'contexts' is not a list of strings"),
        ({"contexts": ["0:t.py::a"], "context_lines": [["1", "0-9"]]}, "not in the table of 1 contexts"),
        ({"contexts": ["0:t.py::a"], "context_lines": [["2-1", "0"]]}, "out of order"),
        ({"contexts": ["0:t.py::a"], "tests_ran_contexts": "5"}, "out of order or too large"),
    ],
)
def test_a_damaged_compact_map_is_one_line_and_exit_2(
    repo: Path, damage: dict[str, object], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((repo / "coverage.json").read_text(encoding="utf-8"))
    data |= {k: v for k, v in damage.items() if k != "context_lines"}
    if "context_lines" in damage:
        data["files"]["pkg/a.py"]["context_lines"] = damage["context_lines"]
    (repo / "coverage.json").write_text(json.dumps(data), encoding="utf-8")
    assert main(["coverage", "query", "pkg/a.py:1"]) == 2
    err = capsys.readouterr().err
    assert "coverage.json" in err and message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(("key", "value"), [("total", "Infinity"), ("created_at", '"\\ud800"')])
def test_an_infinite_count_or_a_lone_surrogate_is_one_line_and_exit_2(
    repo: Path, key: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # found by tests/unit/test_cli_fuzz.py: int() of Infinity raised OverflowError, and "\ud800" failed on the
    # strict UTF-8 stdout: both internal errors (exit 3)
    data = json.loads((repo / "coverage.json").read_text(encoding="utf-8"))
    data["completeness"]["total"] = "@" if key == "total" else data["completeness"]["total"]
    data["created_at"] = "@" if key == "created_at" else data["created_at"]
    text = json.dumps(data).replace('"@"', value)
    (repo / "coverage.json").write_text(text, encoding="utf-8")
    assert main(["coverage", "status"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ci-shards: coverage.json: not a ci-shards coverage artifact: ") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("pyproject.toml", b'[tool.coverage.run]\nbranch = "x\n', "Couldn't read config file pyproject.toml"),
        (".coveragerc", b"[run\nbranch = 1\n", "Couldn't read config file .coveragerc"),
        ("setup.cfg", b"[coverage:run]\nbranch = \xff\n", "'utf-8' codec can't decode byte 0xff"),
    ],
)
def test_a_coverage_config_coverage_py_cannot_read_is_exit_2_naming_it(
    repo: Path, name: str, content: bytes, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # found by tests/unit/test_cli_fuzz.py: coverage.Coverage() raised its ConfigError (or UnicodeDecodeError) out of
    # the fold, an internal error (exit 3) that cost the verdict its summary
    plan = make_plan([["t.py::a"]])
    (repo / "p.json").write_text(plan.dumps(), encoding="utf-8")
    write_all(repo / "shards", plan)
    (repo / name).write_bytes(content)
    assert main(["aggregate", "--plan", "p.json", "shards", "--coverage-out", "cov", "--summary", "s.md"]) == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("ci-shards: coverage: ") and "coverage.py cannot read its configuration: " in last
    assert said in last and (repo / "s.md").is_file()


@pytest.mark.parametrize("command", ["query", "status"])
def test_values_of_the_artifact_never_start_a_line_of_the_answer(
    repo: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # found by tests/unit/test_cli_fuzz.py: coverage.json is another run's artifact, and a created_at (or a path) of
    # "a\n::error::x" printed `::error::x` at a line's start on stdout, a workflow command to a CI runner
    data = json.loads((repo / "coverage.json").read_text(encoding="utf-8"))
    data["created_at"] = "a\n::error::x\r::add-mask::y"
    data["files"]["pkg/a.py"]["sha256"] = "0" * 64  # changed since measured: the answer says since when
    (repo / "coverage.json").write_text(json.dumps(data), encoding="utf-8")
    argv = ["coverage", "query", "pkg/a.py:1"] if command == "query" else ["coverage", "status"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert [line for line in out.replace("\r", "\n").splitlines() if line.lstrip().startswith("::")] == []
    assert "a\\n::error::x\\r::add-mask::y" in out
