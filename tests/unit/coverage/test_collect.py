"""The run stage's side of coverage: which collector, how the command is wrapped, the config key."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ci_shards.config import parse_config
from ci_shards.coverage.collect import (
    CoverageRequest,
    Tool,
    describe,
    environment,
    listed_files,
    tool_for,
    wrap,
)
from ci_shards.errors import ConfigError, UsageError

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
    assert argv == [PY, "-m", "ci_shards.coverage.launch", "-m", "pytest", "-p", "ci_shards.coverage.pytest_map",
                    "-p", "ci_shards", "{items}"]  # fmt: skip
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


def test_config_key() -> None:
    assert parse_config({"coverage": True}, "ci-shards.yml").coverage is True
    with pytest.raises(ConfigError, match="'coverage' must be true or false"):
        parse_config({"coverage": "yes"}, "ci-shards.yml")
