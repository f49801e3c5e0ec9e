"""Issue 8 end to end, with real ``ci-shards`` processes: run and aggregate judge a shard alike, an empty run
fails, runner facts round-trip, a plan with an item twice is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ci_shards.model.plan import Granularity, Plan, ShardPlan

pytestmark = [pytest.mark.e2e]

WRITES_JUNIT = """#!/bin/sh
# a test command whose JUnit names the tests it ran: {names}
cat > "$1" <<'EOF'
<testsuites><testsuite name="suite">{cases}</testsuite></testsuites>
EOF
"""


def ci_shards(
    *args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run(
        [sys.executable, "-m", "ci_shards", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, **(env or {})},
        check=False,
    )


def junit_script(tmp: Path, cases: list[tuple[str, str, str]]) -> Path:
    """A script writing a JUnit report with these (file, classname, name) test cases to its first argument."""
    xml = "".join(f'<testcase file="{f}" classname="{c}" name="{n}" time="0.1"/>' for f, c, n in cases)
    script = tmp / "writes-junit.sh"
    script.write_text(WRITES_JUNIT.format(names=", ".join(n for _f, _c, n in cases), cases=xml), encoding="utf-8")
    script.chmod(0o755)
    return script


def outcome(tmp: Path, index: int = 1, total: int = 1) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp / "out" / f"shard-{index}-of-{total}" / "outcome.json").read_text())
    return data


def aggregate_json(tmp: Path) -> tuple[int, dict[str, Any]]:
    proc = ci_shards("aggregate", "--plan", "plan.json", "out", "--format", "json", cwd=tmp)
    return proc.returncode, json.loads(proc.stdout)


def test_junit_naming_none_of_the_planned_items_fails_in_run_and_in_aggregate(tmp_path: Path) -> None:
    plan = ci_shards("plan", "--items", "-", "--shards", "1", "-o", "plan.json", cwd=tmp_path, stdin="a.py\nb.py\n")
    assert plan.returncode == 0, plan.stderr
    script = junit_script(tmp_path, [("zzz.py", "zzz", "test_z")])

    run = ci_shards(
        "run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--", str(script), "{junit}", cwd=tmp_path
    )

    assert run.returncode == 1, run.stderr
    written = outcome(tmp_path)
    assert written["status"] == "failed"
    assert "name none of its 2 planned items" in written["reason"]
    assert sorted(written["not_run"]) == ["a.py", "b.py"]
    code, verdict = aggregate_json(tmp_path)
    assert code == 1
    shard = verdict["shards"][0]
    assert (shard["status"], shard["reason"], shard["verified"]) == ("failed", written["reason"], False)
    assert sorted(verdict["accounting"]["missing"]) == ["a.py", "b.py"]


def test_parametrized_id_with_colons_covers_its_planned_function_in_run_and_in_aggregate(tmp_path: Path) -> None:
    items = "t.py::test_a\nt.py::test_b\n"
    plan = ci_shards("plan", "--items", "-", "--shards", "1", "-o", "plan.json", cwd=tmp_path, stdin=items)
    assert plan.returncode == 0, plan.stderr
    script = junit_script(tmp_path, [("t.py", "t", "test_a[x::y]"), ("t.py", "t", "test_b")])

    run = ci_shards(
        "run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--", str(script), "{junit}", cwd=tmp_path
    )

    assert run.returncode == 0, run.stderr
    written = outcome(tmp_path)
    assert (written["status"], written["not_run"]) == ("passed", [])
    code, verdict = aggregate_json(tmp_path)
    assert code == 0, verdict["reasons"]
    assert verdict["shards"][0]["status"] == "passed"
    assert verdict["accounting"]["missing"] == []


def write_bad_plan(path: Path) -> Path:
    """A plan running ``t.py`` in both shards, its digest recomputed (``Plan`` checks nothing: loading does)."""
    shards = (ShardPlan(index=1, items=("t.py",), estimated_seconds=1.0), ShardPlan(2, ("t.py",), 1.0))
    plan = Plan(total=2, granularity=Granularity.FILE, shards=shards, lower_bound_seconds=1.0, unknown_items=0)
    path.write_text(plan.dumps(), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--plan", "plan.json", "--shard", "1/2", "--out", "out", "--", "true", "{items}"],
        ["matrix", "--plan", "plan.json", "--plan-out", "again.json"],
        ["aggregate", "--plan", "plan.json", "."],
    ],
)
def test_a_plan_with_an_item_in_two_shards_is_exit_2_naming_it(tmp_path: Path, command: list[str]) -> None:
    write_bad_plan(tmp_path / "plan.json")
    proc = ci_shards(*command, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "item 't.py' is in shards 1 and 2" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_the_pytest_plugin_refuses_a_plan_with_an_item_in_two_shards(tmp_path: Path) -> None:
    write_bad_plan(tmp_path / "plan.json")
    (tmp_path / "t.py").write_text("def test_a():\n    pass\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "ci_shards", "-p", "no:cacheprovider", "--ci-shards-plan=plan.json",
         "--ci-shards-shard=1/2", "t.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 4, proc.stdout + proc.stderr  # pytest's usage error
    assert "item 't.py' is in shards 1 and 2" in proc.stderr


# ---- an empty run fails unless --allow-empty (issue 8 point 1)


@pytest.mark.slow
def test_local_with_a_filter_that_selects_nothing_fails_with_one_line(tmp_path: Path) -> None:
    """Plain pytest exits 5 with "1 deselected": the line says the test was collected and deselected (conformance
    run 9: it said "nothing was collected or listed", which sends the user looking for a wrong path)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a():\n    pass\n", encoding="utf-8")
    args = ["local", "--shards", "2", "--pytest", "--", "tests", "-k", "nonexistent_name"]

    proc = ci_shards(*args, cwd=tmp_path)

    assert proc.returncode == 1, proc.stderr
    assert "PASSED" not in proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ci-shards: ")]
    assert errors == [
        "ci-shards: no tests to run: the plan has no items (pytest collected 1 test and deselected every one: "
        '"1 deselected"); --allow-empty (config allow-empty, action input allow-empty) accepts that'
    ], proc.stderr
    assert json.loads((tmp_path / "ci-shards-results" / "plan.json").read_text(encoding="utf-8"))["deselected"] == 1
    allowed = ci_shards(*args[:-4], "--allow-empty", *args[-4:], cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr


@pytest.mark.slow
def test_a_discovery_plan_whose_every_test_is_deselected_says_so(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    for name in ("a", "b"):
        (tmp_path / "tests" / f"test_{name}.py").write_text("def test_x():\n    pass\n", encoding="utf-8")

    proc = ci_shards("local", "--shards", "2", "--discover", "--pytest", "--", "tests", "-k", "nothing", cwd=tmp_path)

    assert proc.returncode == 1, proc.stderr
    said = "no tests ran: 2 items were planned, but -k/-m deselected 2 planned tests and no other test ran"
    assert said in proc.stdout


def test_allow_empty_in_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "ci-shards.yml").write_text("allow-empty: true\n", encoding="utf-8")
    (tmp_path / "items.txt").write_text("", encoding="utf-8")
    proc = ci_shards("plan", "--items", "items.txt", "--shards", "2", "-o", "plan.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ci_shards("aggregate", "--plan", "plan.json", ".", cwd=tmp_path).returncode == 0


def test_empty_plan_fails_in_plan_run_and_aggregate(tmp_path: Path) -> None:
    (tmp_path / "items.txt").write_text("", encoding="utf-8")
    plan = ci_shards("plan", "--items", "items.txt", "--shards", "2", "-o", "plan.json", cwd=tmp_path)
    assert plan.returncode == 1
    assert (tmp_path / "plan.json").is_file()  # every output is written before the exit
    run = ci_shards("run", "--plan", "plan.json", "--shard", "1/2", "--out", "out", "--", "true", cwd=tmp_path)
    assert run.returncode == 1
    assert outcome(tmp_path, 1, 2)["status"] == "empty"  # the folder states the fact; the plan is what fails
    assert "plan.json has no items" in run.stderr
    code, verdict = aggregate_json(tmp_path)
    assert code == 1
    assert verdict["reasons"][0] == "no tests ran: the plan has no items"


def test_run_in_which_every_test_was_skipped_fails_the_verdict(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("import pytest\n\n@pytest.mark.skip\ndef test_a():\n    pass\n", encoding="utf-8")
    assert (
        ci_shards(
            "plan", "--items", "-", "--shards", "1", "-o", "plan.json", cwd=tmp_path, stdin="t.py::test_a\n"
        ).returncode
        == 0
    )
    run = ci_shards("run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--pytest", cwd=tmp_path)
    assert run.returncode == 0, run.stderr  # a shard whose tests are skipped on this platform passes
    code, verdict = aggregate_json(tmp_path)
    assert code == 1
    assert verdict["reasons"][0].startswith("no tests ran: 1 item was planned")


# ---- each misuse is exit 2 with one line (issue 8, "Also")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run", "--plan", "plan.json", "--shard", "1/1", "--pytest", "--", "pytest", "tests/"],
            "--pytest runs pytest itself",
        ),
        (
            ["plan", "--items", "items.txt", "--durations", ".test_duration", "--shards", "2"],
            ".test_duration: no such timings file",
        ),
        (["matrix", "--items", "items.txt", "--shards", "300"], "--shards 300: more shards than any CI fans out"),
        (["plan", "--items", "items.txt", "--shards", "2", "--weight", "tests/*=1e308"], "--weight 'tests/*=1e308'"),
        (
            ["run", "--plan", "plan.json", "--shard", "1/1", "--retr", "1", "--", "true"],
            "unrecognized arguments: --retr",
        ),
    ],
)
def test_misuse_is_one_line_and_exit_2(tmp_path: Path, argv: list[str], message: str) -> None:
    (tmp_path / "items.txt").write_text("t.py::test_a\n", encoding="utf-8")
    assert ci_shards("plan", "--items", "items.txt", "--shards", "1", "-o", "plan.json", cwd=tmp_path).returncode == 0
    proc = ci_shards(*argv, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr


def test_debug_after_the_subcommand_shows_the_traceback(tmp_path: Path) -> None:
    proc = ci_shards("plan", "--items", "missing.txt", "--shards", "2", "--debug", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" in proc.stderr
    assert "unrecognized arguments" not in proc.stderr  # the error is the real one: the missing file
    assert proc.stderr.splitlines()[-1].startswith("ci-shards: missing.txt")


def test_aggregate_writes_every_output_and_a_failed_timings_write_back_only_warns(tmp_path: Path) -> None:
    (tmp_path / "items.txt").write_text("t.py::test_a\n", encoding="utf-8")
    assert ci_shards("plan", "--items", "items.txt", "--shards", "1", "-o", "plan.json", cwd=tmp_path).returncode == 0
    script = junit_script(tmp_path, [("t.py", "t", "test_a")])
    assert (
        ci_shards(
            "run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--", str(script), "{junit}", cwd=tmp_path
        ).returncode
        == 0
    )
    (tmp_path / "blocker").write_text("a file where the store's folder should be", encoding="utf-8")
    args = ["aggregate", "--plan", "plan.json", "out", "--summary", "summary.md", "--timings-out", "blocker/t.json"]
    step = tmp_path / "step.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(step)}
    for _ in range(2):
        proc = ci_shards(*args, "--github", cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
        assert "::warning::ci-shards: the timings were not written back" in proc.stderr
    assert (tmp_path / "summary.md").read_text().count("ci-shards: passed") == 1
    assert step.read_text().count("ci-shards: passed") == 2


def test_the_run_attempt_the_runner_writes_is_the_one_aggregate_reads(tmp_path: Path) -> None:
    # issue 8: outcome.json's runner facts were written as ci_run_attempt and read as run_attempt, so every
    # attempt read back as 0 and "latest attempt wins" fell to the finish time and the folder path
    (tmp_path / "items.txt").write_text("t.py::test_a\n", encoding="utf-8")
    assert ci_shards("plan", "--items", "items.txt", "--shards", "1", "-o", "plan.json", cwd=tmp_path).returncode == 0
    passing = junit_script(tmp_path, [("t.py", "t", "test_a")])
    command = ["run", "--plan", "plan.json", "--shard", "1/1", "--", str(passing), "{junit}"]
    second = ci_shards(*command[:-3], "--out", "a", *command[-3:], cwd=tmp_path, env={"GITHUB_RUN_ATTEMPT": "2"})
    assert second.returncode == 0, second.stderr
    # the first attempt finishes later and sorts later by path: only its attempt number says it is older
    failing = tmp_path / "fails.sh"
    failing.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    failing.chmod(0o755)
    first = ci_shards(*command[:-3], "--out", "b", "--", str(failing), cwd=tmp_path, env={"GITHUB_RUN_ATTEMPT": "1"})
    assert first.returncode == 1
    proc = ci_shards("aggregate", "--plan", "plan.json", "a", "b", "--format", "json", cwd=tmp_path)
    verdict = json.loads(proc.stdout)
    assert proc.returncode == 0, verdict["reasons"]
    assert verdict["shards"][0]["source"] == "a/shard-1-of-1"
    assert any("attempt 1" in note for note in verdict["shards"][0]["notes"])
