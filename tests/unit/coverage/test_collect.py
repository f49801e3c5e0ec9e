"""The run stage's side of coverage: which collector, how the command is wrapped, the config key."""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from pathlib import Path

import pytest

from ci_shards.common.errors import ConfigError, UsageError
from ci_shards.coverage.collect import (
    CoverageRequest,
    Tool,
    describe,
    environment,
    listed_files,
    not_coverage_data,
    tool_for,
    wrap,
)
from ci_shards.options.config import parse_config

PY = sys.executable


@pytest.mark.parametrize(
    ("command", "pytest_flag", "tool"),
    [
        ([], True, Tool.COVERAGE_PY),
        (["pytest", "-q", "{items}"], False, Tool.COVERAGE_PY),
        ([PY, "-m", "pytest", "{items}"], False, Tool.COVERAGE_PY),
        (["npx", "jest", "{items}"], False, Tool.V8),
        (["/usr/bin/node", "--test", "{items}"], False, Tool.V8),
    ],
)
def test_tool_for(command: list[str], pytest_flag: bool, tool: Tool) -> None:
    assert tool_for(command, pytest=pytest_flag) is tool
    assert tool_for(tuple(command), pytest=pytest_flag) is tool  # the run stage's options hold a tuple


@pytest.mark.parametrize("command", [["go", "test", "./..."], [PY, "script.py"], []])
def test_a_command_nothing_can_measure_is_a_usage_error(command: list[str]) -> None:
    with pytest.raises(UsageError, match="--coverage: cannot measure"):
        tool_for(command, pytest=False)


def test_pytest_runs_under_the_launcher_with_the_map() -> None:
    template = [PY, "-m", "pytest", "-p", "ci_shards", "{items}"]
    argv = wrap(template, tool=Tool.COVERAGE_PY, python=PY, request=CoverageRequest())
    # the map after ci_shards: loaded first, it would import the package pytest then cannot rewrite
    assert argv == [PY, "-m", "ci_shards.coverage.launch", "-m", "pytest", "-p", "ci_shards",
                    "-p", "ci_shards.coverage.pytest_map", "{items}"]  # fmt: skip
    no_map = wrap(template, tool=Tool.COVERAGE_PY, python=PY, request=CoverageRequest(map=False))
    assert "ci_shards.coverage.pytest_map" not in no_map


def test_other_commands_keep_their_words() -> None:
    request = CoverageRequest()
    assert wrap([PY, "-m", "unittest", "x"], tool=Tool.COVERAGE_PY, python=PY, request=request) == [
        PY, "-m", "ci_shards.coverage.launch", "-m", "unittest", "x"
    ]  # fmt: skip
    with_map = [PY, "-m", "ci_shards.coverage.launch", "-m", "pytest", "-p", "ci_shards.coverage.pytest_map", "-q"]
    assert wrap([PY, "-m", "pytest", "-q"], tool=Tool.COVERAGE_PY, python=PY, request=request) == with_map
    assert wrap(["pytest", "-q"], tool=Tool.COVERAGE_PY, python=PY, request=request) == with_map
    own = wrap(["/opt/py/bin/python3", "-m", "unittest"], tool=Tool.COVERAGE_PY, python=PY, request=request)
    assert own[:3] == ["/opt/py/bin/python3", "-m", "ci_shards.coverage.launch"]  # the project's interpreter stays
    assert wrap(["npx", "jest"], tool=Tool.V8, python=PY, request=request) == ["npx", "jest"]


def test_node_gets_its_own_v8_folder(tmp_path: Path) -> None:
    assert environment(Tool.V8, tmp_path) == {"NODE_V8_COVERAGE": str(tmp_path.resolve())}


def test_missing_and_unsaved_data_are_problems(tmp_path: Path) -> None:
    request = CoverageRequest()
    entry = describe(Tool.COVERAGE_PY, tmp_path, source_root=tmp_path, request=request, launched=1)
    assert entry["problem"].startswith("no coverage data was written")
    (tmp_path / "coverage-py.host.1.x").write_bytes(b"not sqlite at all")
    entry = describe(Tool.COVERAGE_PY, tmp_path, source_root=tmp_path, request=request, launched=1)
    assert "1 of 1 test processes" in entry["problem"]
    (tmp_path / "saved-1").touch()
    entry = describe(Tool.COVERAGE_PY, tmp_path, source_root=tmp_path, request=request, launched=1)
    assert entry["problem"].startswith("unreadable coverage data: coverage-py.host.1.x")


def test_only_the_listed_data_files_are_folded_and_all_must_be_there(tmp_path: Path) -> None:
    data = tmp_path / "coverage"
    data.mkdir()
    (data / "coverage-py.a").write_bytes(b"x")
    (data / "coverage-py.stray").write_bytes(b"x")  # left by another attempt: not this run's data
    entry = {"data": "coverage", "files": ["coverage-py.a"]}
    assert listed_files(tmp_path, entry) == ([data / "coverage-py.a"], "")
    files, problem = listed_files(tmp_path, {**entry, "files": ["coverage-py.a", "coverage-py.gone"]})
    assert files == []
    assert problem == f"1 of 2 coverage data files listed in outcome.json are not in {data}: coverage-py.gone"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"data": "coverage"}, "outcome.json's coverage entry has no list of data files"),
        ({"data": "coverage", "files": "coverage-py.a"}, "outcome.json's coverage entry has no list of data files"),
        ({"data": 3, "files": []}, "outcome.json's coverage entry has no list of data files"),
        ({"data": "coverage", "files": []}, "outcome.json lists no coverage data file"),
        ({"data": "..", "files": ["x"]}, "outcome.json's coverage entry names a path, not a file in the folder: '..'"),
        ({"data": "coverage", "files": ["../../etc/passwd"]}, "names a path, not a file in the folder"),
    ],
)
def test_an_entry_of_the_wrong_shape_is_a_problem_never_a_path_outside(entry: dict[str, object], problem: str) -> None:
    files, found = listed_files(Path("shard"), entry)
    assert files == [] and problem in found


def test_a_listed_name_the_file_system_refuses_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    # is_file() raises for ENAMETOOLONG and EACCES (not only returns False): the shard is lost, aggregate goes on
    (tmp_path / "coverage").mkdir()
    files, problem = listed_files(tmp_path, {"data": "coverage", "files": ["x" * 300]})
    assert files == [] and problem.startswith(f"cannot read {tmp_path / 'coverage'}: ")


def test_only_a_coverage_py_database_counts_as_coverage_data(tmp_path: Path) -> None:
    # coverage.py reads an empty file, or a database of other tables, as "no line ran" (and writes its
    # schema into it): a data file cut to 0 bytes must not fold as a complete shard that executed nothing
    from coverage import CoverageData  # noqa: PLC0415 - only this test needs coverage.py

    real = tmp_path / "coverage-py.real"
    data = CoverageData(basename=str(real))
    data.add_lines({str(tmp_path / "a.py"): [1, 2]})
    data.write()
    assert not_coverage_data(real) == ""
    empty = tmp_path / "coverage-py.empty"
    empty.touch()
    assert not_coverage_data(empty) == "coverage-py.empty: not a coverage.py data file (empty)"
    assert empty.stat().st_size == 0  # checked without writing into the shard's folder
    (tmp_path / "coverage-py.json").write_text('{"lines": {}}')
    assert "(not SQLite)" in not_coverage_data(tmp_path / "coverage-py.json")
    other = tmp_path / "coverage-py.other"
    with contextlib.closing(sqlite3.connect(other)) as db:
        db.execute("create table other (x)")
        db.commit()
    assert not_coverage_data(other).startswith("coverage-py.other: not a coverage.py data file (no such table")
    assert describe(Tool.COVERAGE_PY, tmp_path, source_root=tmp_path, request=CoverageRequest(), launched=0)[
        "problem"
    ].startswith("unreadable coverage data: coverage-py.empty, coverage-py.json, coverage-py.other")


def test_config_key() -> None:
    assert parse_config({"coverage": True}, "ci-shards.yml").coverage is True
    with pytest.raises(ConfigError, match="'coverage' must be true or false"):
        parse_config({"coverage": "yes"}, "ci-shards.yml")


def test_the_map_plugin_is_told_its_contexts(tmp_path: Path) -> None:
    assert environment(Tool.COVERAGE_PY, tmp_path)["CI_SHARDS_COVERAGE_MAP_PER"] == "test"
    assert environment(Tool.COVERAGE_PY, tmp_path, "file")["CI_SHARDS_COVERAGE_MAP_PER"] == "file"


@pytest.mark.parametrize(
    "settings",
    [b"\xff\xfe[run]\nbranch = true\n", b"[run]\nbranch = maybe\n"],
    ids=["not-utf-8", "bad-value"],
)
def test_settings_coverage_py_cannot_read_are_one_line_of_the_launcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], settings: bytes
) -> None:
    # undecodable bytes had raised a UnicodeDecodeError from inside coverage.py: a traceback through this launcher
    # in the shard's output, and the shard said only "no test report"
    pytest.importorskip("coverage")
    from ci_shards.coverage import launch  # noqa: PLC0415  (coverage.py imported only where it is installed)

    (tmp_path / ".coveragerc").write_bytes(settings)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COVERAGE_RCFILE", raising=False)
    monkeypatch.setenv(launch.DATA_DIR_ENV, str(tmp_path))
    assert launch.main(["-m", "this_module_is_never_run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ci-shards: coverage.py cannot read the coverage settings (.coveragerc, setup.cfg,")
    assert len(err.splitlines()) == 1 and "Traceback" not in err
