"""Shard resolution from CI variables, the GitHub matrix and job outputs, and the matrix command."""

from __future__ import annotations

import json
import re

import pytest

from ci_shards.cli import main
from ci_shards.common.errors import UsageError
from ci_shards.model.plan import Granularity
from ci_shards.plan.matrix import format_outputs, github_matrix, job_outputs, resolve_shard
from ci_shards.plan.planner import plan_items


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4"}, (1, 4)),  # GitLab, 1-based
        ({"CI_NODE_INDEX": "4", "CI_NODE_TOTAL": "4"}, (4, 4)),
        ({"CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "3"}, (1, 3)),  # CircleCI, 0-based
        ({"CIRCLE_NODE_INDEX": "2", "CIRCLE_NODE_TOTAL": "3"}, (3, 3)),
        ({"BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "2"}, (1, 2)),  # Buildkite, 0-based
        ({"TEST_SHARD_INDEX": "5", "TEST_TOTAL_SHARDS": "8"}, (6, 8)),  # Bazel, 0-based
        ({"CI_SHARDS_SHARD": "2/5", "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4"}, (2, 5)),  # ours wins
    ],
)
def test_auto_from_ci_variables(env, expected):
    assert resolve_shard("auto", env) == expected


@pytest.mark.parametrize(
    ("spec", "env", "reason"),
    [
        ("0/4", {}, "between 1 and 4"),
        ("5/4", {}, "between 1 and 4"),
        ("2/0", {}, "at least 1"),
        ("x", {}, "not of the form I/N"),
        ("1/2/3", {}, "not of the form I/N"),
        ("auto", {}, "no CI shard variables found"),
        ("auto", {"CI_NODE_INDEX": "1"}, "CI_NODE_TOTAL is not set"),
        ("auto", {"CI_SHARDS_SHARD": "3/2"}, "CI_SHARDS_SHARD: shard '3/2': the index must be between 1 and 2"),
        ("auto", {"CIRCLE_NODE_INDEX": "a", "CIRCLE_NODE_TOTAL": "2"}, "must be whole numbers"),
        ("auto", {"CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "4"}, "1-based"),  # GitLab never says 0
        ("auto", {"CIRCLE_NODE_INDEX": "3", "CIRCLE_NODE_TOTAL": "3"}, "between 1 and 3"),
    ],
)
def test_bad_shard_specs_say_why(spec, env, reason):
    with pytest.raises(UsageError, match=re.escape(reason)):
        resolve_shard(spec, env)


def test_explicit_spec_wins_over_environment():
    assert resolve_shard("2/3", {"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4"}) == (2, 3)


def _plan(items=("a.py::t1", "a.py::t2", "b.py::t"), shards=2):
    return plan_items(items, {"a.py::t1": 1.0, "a.py::t2": 2.0, "b.py::t": 3.0}, shards)


def test_run_refuses_a_plan_with_a_different_total(tmp_path, capsys):
    (tmp_path / "plan.json").write_text(_plan().dumps())
    assert main(["run", "--plan", str(tmp_path / "plan.json"), "--shard", "1/3", "--", "true"]) == 2
    assert "has 2 shards" in capsys.readouterr().err


def test_github_matrix_and_outputs():
    plan = _plan()
    assert github_matrix(plan) == {
        "include": [{"shard": 1, "total": 2, "label": "1/2"}, {"shard": 2, "total": 2, "label": "2/2"}]
    }
    outputs = job_outputs(plan)
    assert json.loads(outputs["matrix"]) == github_matrix(plan)
    assert outputs["plan-digest"] == plan.digest
    assert outputs["total"] == "2"
    assert outputs["empty"] == "false"
    assert job_outputs(plan_items([], {}, 3))["empty"] == "true"


def test_format_outputs_multiline_and_refuses_delimiter():
    text = format_outputs({"a": "x\ny", "b": "z"}, delimiter="EOF123")
    assert text == "a<<EOF123\nx\ny\nEOF123\nb<<EOF123\nz\nEOF123\n"
    with pytest.raises(ValueError, match="delimiter"):
        format_outputs({"a": "EOF123"}, delimiter="EOF123")


def parse_github_output(text: str) -> dict[str, str]:
    """Read $GITHUB_OUTPUT the way the runner does (name<<DELIM ... DELIM)."""
    outputs, lines, i = {}, text.split("\n"), 0
    while i < len(lines) and lines[i]:
        name, delim = lines[i].split("<<", 1)
        end = lines.index(delim, i + 1)
        outputs[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return outputs


def test_matrix_command_writes_plan_and_outputs(tmp_path, monkeypatch, capsys, real_data):
    durations = real_data / "durations" / "PMEAL__porespy__.test_durations"
    github_output = tmp_path / "out.txt"
    github_output.write_text("earlier=kept\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_OUTPUT", str(github_output))
    assert main(["matrix", "--durations", str(durations), "--from-timings", "--shards", "4"]) == 0
    out, err = capsys.readouterr()
    matrix = json.loads(out)
    assert [e["label"] for e in matrix["include"]] == ["1/4", "2/4", "3/4", "4/4"]
    plan = json.loads((tmp_path / "plan.json").read_text())
    text = github_output.read_text()
    assert text.startswith("earlier=kept\n")
    outputs = parse_github_output(text.split("\n", 1)[1])
    assert json.loads(outputs["matrix"]) == matrix
    assert outputs["plan-digest"] == plan["digest"]
    assert outputs["total"] == "4"
    assert outputs["empty"] == "false"
    assert "shard" in err  # the human table goes to stderr


def test_matrix_from_existing_plan_and_empty_plan(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    (tmp_path / "items.txt").write_text("")
    plan = ["plan", "--items", "items.txt", "--shards", "2", "-o", "given.json", "--format", "json"]
    assert main(plan) == 1  # an empty plan fails (issue 8), after plan.json was written
    assert "no tests to run: the plan has no items" in capsys.readouterr().err
    assert main([*plan, "--allow-empty"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "gh"))
    assert main(["matrix", "--plan", "given.json", "--plan-out", "copy.json", "--allow-empty"]) == 0
    assert (tmp_path / "copy.json").read_text() == (tmp_path / "given.json").read_text()
    assert parse_github_output((tmp_path / "gh").read_text())["empty"] == "true"
    assert "plan is empty" in capsys.readouterr().err
    assert main(["matrix", "--plan", "given.json", "--plan-out", "copy.json"]) == 1


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{", "not valid JSON at line 1"),
        ("[]", "not a plan"),
        ('{"schema": "other"}', 'not a valid plan: schema is "other"'),
    ],
)
def test_matrix_with_bad_plan_file(tmp_path, monkeypatch, capsys, content, problem):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.json").write_text(content)
    assert main(["matrix", "--plan", "plan.json", "--plan-out", "out.json"]) == 2
    err = capsys.readouterr().err
    assert f"plan.json: {problem}" in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_tampered_plan_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    plan = plan_items(["a::t", "b::t"], {}, 2, granularity=Granularity.TEST)
    data = plan.to_json()
    data["shards"][0]["items"] = []
    (tmp_path / "plan.json").write_text(json.dumps(data))
    assert main(["matrix", "--plan", "plan.json"]) == 2
    assert "digest does not match" in capsys.readouterr().err
