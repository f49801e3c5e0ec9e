"""The aggregate stage's subcommands through ``cli.main``: aggregate, junit merge, junit summary."""

from __future__ import annotations

import argparse
import json

import pytest

from ci_shards.cli import build_parser, main
from ci_shards.junit import parse_junit
from ci_shards.model.failures import FailureRecord
from ci_shards.model.outcome import CaseOutcome
from ci_shards.model.plan import Granularity
from ci_shards.timings.store import load_timings
from tests.unit.aggregate_fixtures import case_for, make_plan, write_all, write_shard
from tests.unit.junit.test_junit import EXPECTED

ITEMS = [["tests/test_a.py::test_one", "tests/test_a.py::test_two"], ["tests/test_b.py::t"]]


@pytest.fixture(autouse=True)
def _not_on_github(monkeypatch):
    for key in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_EVENT_PATH", "GITHUB_TOKEN"):
        monkeypatch.delenv(key, raising=False)


def _setup(tmp_path, plan):
    (tmp_path / "plan.json").write_text(plan.dumps())
    return str(tmp_path / "plan.json")


def test_aggregate_writes_every_output(tmp_path, capsys):
    plan = make_plan(ITEMS)
    plan_path = _setup(tmp_path, plan)
    results = tmp_path / "results"
    write_shard(results, plan, 1, [case_for(ITEMS[0][0], CaseOutcome.FAILED), case_for(ITEMS[0][1], time=2.0)])
    # shard 2 never started
    out = tmp_path / "out"
    code = main([
        "aggregate", "--plan", plan_path, str(results), "--junit", str(out / "merged.xml"),
        "--failures", str(out / "all.jsonl"), "--summary", str(out / "summary.md"),
        "--timings-out", str(out / "timings.json"), "--format", "json",
    ])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1
    verdict = json.loads(captured.out)
    assert verdict["schema"] == "ci-shards/verdict@1"
    assert verdict["passed"] is False
    assert [s["status"] for s in verdict["shards"]] == ["failed", "never-started"]
    assert verdict["accounting"]["missing"] == ["tests/test_b.py::t"]
    assert "never-started" in captured.err  # the terminal table goes to stderr
    merged = parse_junit(out / "merged.xml")
    assert [c.test_id for c in merged] == ITEMS[0]
    records = [FailureRecord.from_json(json.loads(line)) for line in (out / "all.jsonl").read_text().splitlines()]
    assert {(r.test_id, r.kind.value) for r in records} == {
        (ITEMS[0][0], "failed"),
        ("shard 2/2", "shard"),
        ("tests/test_b.py::t", "not-run"),
    }
    assert "ci-shards: failed" in (out / "summary.md").read_text()
    store = load_timings(out / "timings.json")
    assert store.estimates() == {ITEMS[0][0]: 1.5, ITEMS[0][1]: 2.0}
    # a second run folds into the history instead of replacing it
    write_all(results, plan)
    assert main(["aggregate", "--plan", plan_path, str(results), "--timings-out", str(out / "timings.json")]) == 0
    assert load_timings(out / "timings.json").estimates()[ITEMS[0][1]] == pytest.approx(1.75)


def test_file_plan_timings_are_per_file(tmp_path):
    plan = make_plan([["tests/test_a.py"], ["tests/test_b.py"]], Granularity.FILE)
    plan_path = _setup(tmp_path, plan)
    write_shard(
        tmp_path / "r", plan, 1, [case_for("tests/test_a.py::x", time=1.0), case_for("tests/test_a.py::y", time=2.0)]
    )
    write_shard(tmp_path / "r", plan, 2, [case_for("tests/test_b.py::z", time=4.0)])
    assert main(["aggregate", "--plan", plan_path, str(tmp_path / "r"), "--timings-out", str(tmp_path / "t.json")]) == 0
    estimates = load_timings(tmp_path / "t.json").estimates()
    assert estimates["tests/test_a.py"] == 3.0
    assert estimates["tests/test_b.py"] == 4.0


@pytest.mark.parametrize(
    ("content", "problem"),
    [(None, "no such plan file"), ("{", "not valid JSON at line 1"), ('{"schema": "x"}', "not a valid plan")],
)
def test_bad_plan_is_exit_2_naming_the_file(tmp_path, capsys, content, problem):
    path = tmp_path / "plan.json"
    if content is not None:
        path.write_text(content)
    assert main(["aggregate", "--plan", str(path), str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err
    assert problem in err
    assert "Traceback" not in err


def test_missing_results_dir_is_exit_2(tmp_path, capsys):
    plan_path = _setup(tmp_path, make_plan(ITEMS))
    assert main(["aggregate", "--plan", plan_path, str(tmp_path / "nope")]) == 2
    assert "nope: not a directory" in capsys.readouterr().err


def test_github_without_step_summary_is_usage_error(tmp_path, capsys):
    plan_path = _setup(tmp_path, make_plan(ITEMS))
    assert main(["aggregate", "--plan", plan_path, str(tmp_path), "--github"]) == 2
    assert "GITHUB_STEP_SUMMARY" in capsys.readouterr().err


def test_junit_merge_and_summary(tmp_path, real_data, capsys):
    junit = real_data / "junit"
    out = tmp_path / "merged.xml"
    assert main(["junit", "merge", str(junit / "[!E]*.xml"), str(junit / "*.golden"), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["junit", "summary", str(out), "--format", "json"]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert main(["junit", "summary", str(junit / "[!E]*.xml"), str(junit / "*.golden"), "--format", "json"]) == 0
    direct = json.loads(capsys.readouterr().out)
    assert merged["schema"] == "ci-shards/junit-summary@1"
    assert {k: v for k, v in merged.items() if k not in ("files", "time")} == {
        k: v for k, v in direct.items() if k not in ("files", "time")
    }
    assert merged["time"] == pytest.approx(direct["time"], abs=0.1)
    want = [v for name, v in EXPECTED.items() if not name.startswith("E")]
    assert direct["files"] == len(want) == 15
    assert [direct[k] for k in ("tests", "passed", "failed", "errors", "skipped", "flaky")] == [
        sum(v[i] for v in want) for i in range(6)
    ]
    assert main(["junit", "summary", str(out)]) == 0
    assert f"tests: {direct['tests']}" in capsys.readouterr().out


def test_junit_merge_keeps_good_files_and_names_the_bad_one(tmp_path, real_data, capsys):
    bad = real_data / "junit" / "EnricoMi__publish-unit-test-result-action__python__test__files__xml__non-xml.xml"
    good = real_data / "junit" / "weiwei__junitparser__tests__data__jenkins.xml"
    out = tmp_path / "m.xml"
    assert main(["junit", "merge", str(good), str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert bad.name in err
    assert "not valid XML" in err
    assert len(parse_junit(out)) == 3  # partial results are kept


def test_junit_glob_matching_nothing_is_exit_2(tmp_path, capsys):
    assert main(["junit", "summary", str(tmp_path / "*.xml")]) == 2
    assert "no files match" in capsys.readouterr().err


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


@pytest.mark.parametrize("path", [("aggregate",), ("junit", "merge"), ("junit", "summary"), ("comment",)])
def test_every_flag_states_its_default(path, capsys):
    parser = build_parser()
    for name in path:
        parser = dict(_subparsers(parser))[name]
    flags = [a for a in parser._actions if a.option_strings and a.dest != "help" and a.help != argparse.SUPPRESS]
    assert flags
    for action in flags:
        assert "(default" in (action.help or "") or "(required" in (action.help or ""), action.option_strings
    assert main([*path, "--help"]) == 0
    assert "usage:" in capsys.readouterr().out


def test_junit_without_a_subcommand_is_usage_error(capsys):
    assert main(["junit"]) == 2
    assert "merge" in capsys.readouterr().err
    assert main(["junit", "merge", "x.xml"]) == 2  # -o is required
    assert "-o/--output" in capsys.readouterr().err


def test_junit_merge_creates_the_output_folder(tmp_path, real_data):
    good = real_data / "junit" / "weiwei__junitparser__tests__data__jenkins.xml"
    out = tmp_path / "new" / "dir" / "merged.xml"
    assert main(["junit", "merge", str(good), "-o", str(out)]) == 0
    assert len(parse_junit(out)) == 3


def test_a_corrupt_timings_store_warns_and_is_replaced_after_every_other_output(tmp_path, capsys):
    plan = make_plan(ITEMS)
    plan_path = _setup(tmp_path, plan)
    results = tmp_path / "results"
    write_all(results, plan)
    store = tmp_path / "cache" / "timings.json"
    store.parent.mkdir()
    store.write_text('{"schema": "ci-shards/timings@1", "variants": {"": {"x": [1.0')  # a cut-off cache entry
    summary = tmp_path / "summary.md"
    args = ["aggregate", "--plan", plan_path, str(results), "--summary", str(summary), "--timings-out", str(store)]
    assert main(args) == 0
    err = capsys.readouterr().err
    (warning,) = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warning.startswith(f"warning: {store}: not valid JSON at line 1")
    assert "starting a fresh timings store" in warning
    assert "ci-shards: passed" in summary.read_text()
    assert sorted(load_timings(store).estimates()) == sorted(i for shard in ITEMS for i in shard)


def test_timings_are_written_after_every_other_output(tmp_path, capsys):
    plan = make_plan(ITEMS)
    plan_path = _setup(tmp_path, plan)
    write_all(tmp_path / "results", plan)
    (tmp_path / "blocker").write_text("a file where the store's folder should be")
    out = tmp_path / "out"
    code = main([
        "aggregate", "--plan", plan_path, str(tmp_path / "results"), "--junit", str(out / "merged.xml"),
        "--failures", str(out / "all.jsonl"), "--summary", str(out / "summary.md"),
        "--timings-out", str(tmp_path / "blocker" / "timings.json"), "--format", "json",
    ])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0  # issue 8: a passed verdict stays passed when only the timings write-back fails
    assert "warning: ci-shards: the timings were not written back" in captured.err
    assert json.loads(captured.out)["passed"] is True
    assert "ci-shards: passed" in (out / "summary.md").read_text()
    assert len(parse_junit(out / "merged.xml")) == 3
    assert (out / "all.jsonl").read_text() == ""


def test_timings_write_back_failure_is_a_github_warning(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    plan = make_plan(ITEMS)
    plan_path = _setup(tmp_path, plan)
    write_all(tmp_path / "results", plan)
    (tmp_path / "blocker").write_text("not a folder")
    code = main(
        [
            "aggregate",
            "--plan",
            plan_path,
            str(tmp_path / "results"),
            "--timings-out",
            str(tmp_path / "blocker" / "t.json"),
        ]
    )
    assert code == 0
    assert "::warning::ci-shards: the timings were not written back" in capsys.readouterr().err


def test_an_unwritable_output_is_exit_2_after_every_other_output(tmp_path, capsys):
    plan = make_plan(ITEMS)
    plan_path = _setup(tmp_path, plan)
    write_all(tmp_path / "results", plan)
    (tmp_path / "blocker").write_text("not a folder")
    out = tmp_path / "out"
    code = main([
        "aggregate", "--plan", plan_path, str(tmp_path / "results"), "--junit", str(tmp_path / "blocker" / "m.xml"),
        "--failures", str(out / "all.jsonl"), "--summary", str(out / "summary.md"), "--comment-out", str(out / "c.md"),
    ])  # fmt: skip
    assert code == 2
    assert "blocker/m.xml: cannot create its folder" in capsys.readouterr().err
    assert (out / "all.jsonl").is_file() and (out / "summary.md").is_file() and (out / "c.md").is_file()


def test_summary_file_is_written_not_appended_and_combines_with_github(tmp_path, capsys, monkeypatch):
    plan = make_plan(ITEMS)
    plan_path = _setup(tmp_path, plan)
    write_all(tmp_path / "results", plan)
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    args = [
        "aggregate",
        "--plan",
        plan_path,
        str(tmp_path / "results"),
        "--summary",
        str(tmp_path / "s.md"),
        "--github",
    ]
    assert main(args) == 0
    assert main(args) == 0
    mine = (tmp_path / "s.md").read_text()
    assert mine.count("ci-shards: passed") == 1  # twice run, one verdict in the named file
    assert step_summary.read_text() == "earlier step\n" + mine + mine  # the job summary is appended to


def test_implausible_times_are_zero_in_the_summary_and_skipped_in_the_store(tmp_path, capsys):
    plan = make_plan(ITEMS)
    plan_path = _setup(tmp_path, plan)
    results = tmp_path / "results"
    write_all(results, plan)
    (shard_1,) = [p for p in results.iterdir() if (p / "junit.xml").is_file() and "1" in p.name.split("-of-")[0]]
    (shard_1 / "junit.xml").write_text(
        '<testsuite><testcase classname="tests.test_a" name="test_one" file="tests/test_a.py" time="1e30"/>'
        '<testcase classname="tests.test_a" name="test_two" file="tests/test_a.py" time="2.5"/></testsuite>'
    )
    store = tmp_path / "timings.json"
    code = main(["aggregate", "--plan", plan_path, str(results), "--timings-out", str(store), "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0
    verdict = json.loads(captured.out)
    assert verdict["totals"]["time"] == pytest.approx(2.5 + 1.5)  # 1e30 counts as 0
    assert f"warning: {store}: skipped 1 unusable duration(s) (negative, NaN, over a day or not a number)" in (
        captured.err
    )
    assert load_timings(store).estimates() == {ITEMS[0][1]: 2.5, ITEMS[1][0]: 1.5}
