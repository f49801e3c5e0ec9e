"""The pytest example workflow, run for real with act over the demo suite (see act_harness.py for the setup).

Four workflow runs, each a whole workflow (plan → matrix of shards → report), and one run after another:
- one failing test injected, with the report's ``fail-on: new``: the report job fails, its summary names that test
  and every shard, and the merged JUnit holds every demo test exactly once;
- the test history: that failing run on the default branch classifies the injected failure as new (nothing to
  compare with yet) and records it; a second run, starting from the cache the first saved, finds it already
  failing on main: known, and with ``fail-on: new`` the report passes;
- one matrix leg that never runs the shard (its step is skipped, so the leg itself succeeds and
  ``needs.test.result`` says success): the report still fails and says ``never-started``;
- a ``-k`` that selects nothing: the plan job fails saying so, and the report job fails with a summary saying
  no tests ran (issue 8: an empty suite never passes).

Run just these with ``.venv/bin/python -m pytest tests/e2e/gha/test_act_pytest.py -v`` (docs/benchmarks.md has
their times).
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.gha.act_harness import REPO, RUN_ID, ActRun, make_repo, run_act

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

DEMO = REPO / "examples" / "demo"
EXAMPLE = REPO / "examples" / "workflows" / "pytest.yml"
INJECTED = "tests/test_injected.py"
INJECTED_ID = f"{INJECTED}::test_injected_failure"


def example_workflow() -> dict[str, Any]:
    workflow: dict[Any, Any] = yaml.safe_load(EXAMPLE.read_text())
    # YAML 1.1 reads the key `on` as the boolean true; give it back its name.
    return {("on" if key is True else key): value for key, value in workflow.items()}


def step_with(workflow: dict[str, Any], job: str, command: str) -> dict[str, Any]:
    """The step of ``job`` that runs the action's ``command`` (its ``with: command:``), to edit in place."""
    steps: list[dict[str, Any]] = workflow["jobs"][job]["steps"]
    return next(s for s in steps if s.get("with", {}).get("command") == command)


def two_shards(workflow: dict[str, Any]) -> dict[str, Any]:
    """The workflow planning 2 shards instead of the example's 4, for a test whose point needs any N >= 2: each
    matrix leg is a job of its own (setup, install, a shard, an upload), about a sixth of an act run's CPU."""
    step_with(workflow, "plan", "plan")["with"]["shards"] = 2
    return workflow


def demo_files(extra: dict[str, str] | None = None) -> dict[str, str | Path]:
    """The demo as a project of its own: tests/ at the root, and its durations keyed the same way."""
    durations = json.loads((DEMO / ".test_durations").read_text())
    prefix = "examples/demo/"
    rebased = {(k[len(prefix) :] if k.startswith(prefix) else k): v for k, v in durations.items()}
    files: dict[str, str | Path] = {"tests": DEMO / "tests", ".test_durations": json.dumps(rebased, indent=2)}
    files.update(extra or {})
    return files


def collected_ids(repo: Path) -> list[str]:
    """The suite's node ids as pytest itself collects them, independent of ci-shards."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:ci_shards"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in done.stdout.splitlines() if "::" in line]


def junit_ids(path: Path) -> list[str]:
    """Node ids of every <testcase> in a JUnit file, read straight from the XML (not through ci-shards).

    Accepts pytest's own form (classname ``tests.test_a.TestK``) and the runner's (classname ``TestK`` or empty,
    with the ``file`` attribute)."""
    ids = []
    for case in ET.parse(path).iter("testcase"):
        file, classname, name = case.get("file", ""), case.get("classname", ""), case.get("name", "")
        module = file.removesuffix(".py").replace("/", ".")
        if classname == module or classname.startswith(module + "."):
            classname = classname[len(module) :].lstrip(".")
        ids.append("::".join([file, *(classname.split(".") if classname else []), name]))
    return ids


def report(run: ActRun) -> Path:
    return run.artifact("ci-shards-report-a1")


def plan_of(run: ActRun) -> dict[str, Any]:
    plan: dict[str, Any] = json.loads((run.artifact("ci-shards-plan") / "plan.json").read_text())
    return plan


@pytest.fixture(scope="module")
def failing_run(act: str, wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ActRun]:
    """(the repository, its act run): the demo with one failing test injected, the example workflow with the
    report's ``fail-on: new`` (the test history's setting; a new failure fails the report as the default does).
    Read by two tests of this module: ``--dist loadfile`` gives a module to one worker, so act runs it once."""
    work = tmp_path_factory.mktemp("act-failing")
    workflow = two_shards(example_workflow())
    step_with(workflow, "report", "aggregate")["with"]["fail-on"] = "new"
    failing = "def test_injected_failure():\n    assert 6 * 7 == 41, 'injected by tests/e2e/gha/test_act_pytest.py'\n"
    repo = make_repo(work / "repo", workflow, demo_files({INJECTED: failing}))
    run = run_act(act, repo, work, wheels)
    print(f"act run took {run.seconds:.1f}s; log in {work / 'act.log'}")
    return repo, run


def test_failing_test_fails_the_report_and_every_test_is_merged_once(failing_run: tuple[Path, ActRun]) -> None:
    repo, run = failing_run
    expected = collected_ids(repo)
    assert INJECTED_ID in expected and len(expected) == 45

    assert run.returncode != 0, run.log[-3000:]
    jobs = run.job_results()
    assert jobs.get("plan") == "succeeded", jobs
    assert jobs.get("report") == "failed", jobs
    plan = plan_of(run)
    total = plan["total"]
    assert total >= 2, plan
    assert plan["unknown_items"] == 1, "the committed durations should cover every demo test but the injected one"

    summary = (report(run) / "summary.md").read_text()
    assert "test_injected_failure" in summary
    for shard in plan["shards"]:
        name = f"{shard['index']}/{total}"
        assert name in summary, f"shard {name} not named in the summary:\n{summary}"

    merged = junit_ids(report(run) / "junit.xml")
    assert sorted(merged) == sorted(expected), "merged JUnit must hold every collected test exactly once"
    # Every planned test ran exactly once, so the only reason to fail is the injected test.
    assert "never ran" not in summary and "never planned" not in summary, summary
    failures = [json.loads(line) for line in (report(run) / "failures.jsonl").read_text().splitlines() if line.strip()]
    assert [f["test_id"] for f in failures if f.get("test_id") == INJECTED_ID] == [INJECTED_ID], failures
    # An annotation points at the failing test's file.
    assert "::error file=tests/test_injected.py" in run.log
    # A push to the default branch saves the updated timings under the rolling key (run id, attempt).
    assert (run.artifacts.parent / "cache" / f"ci-shards-timings-Linux--{RUN_ID}-1.tar").is_file()


def test_never_started_shard_fails_the_report_although_needs_says_success(
    act: str, wheels: Path, tmp_path: Path
) -> None:
    workflow = two_shards(example_workflow())
    run_step = step_with(workflow, "test", "run")
    # Leg 2 starts but never runs its shard: like a leg whose runner never came, it uploads nothing
    # while the job itself succeeds, so needs.test.result is 'success' for the report job.
    run_step["if"] = "${{ matrix.shard != 2 }}"
    # Record what the report job sees of the matrix job, to show the case is the deceptive one.
    report_steps = workflow["jobs"]["report"]["steps"]
    report_steps.insert(0, {"run": 'echo "needs.test.result=${{ needs.test.result }}"'})
    repo = make_repo(tmp_path / "repo", workflow, demo_files())

    run = run_act(act, repo, tmp_path, wheels)
    print(f"act run took {run.seconds:.1f}s; log in {tmp_path / 'act.log'}")

    assert run.returncode != 0, run.log[-3000:]
    jobs = run.job_results()
    assert jobs.get("report") == "failed", jobs
    assert "needs.test.result=success" in run.log
    test_legs = {job: verdict for job, verdict in jobs.items() if job.startswith("test")}
    assert test_legs and set(test_legs.values()) == {"succeeded"}, test_legs

    plan = plan_of(run)
    uploaded = sorted(p.name for p in (run.artifacts / "1").glob("ci-shards-shard-*"))
    assert len(uploaded) == plan["total"] - 1, uploaded
    summary = (report(run) / "summary.md").read_text()
    assert "never-started" in summary
    assert f"2/{plan['total']}" in summary


def test_a_filter_that_selects_nothing_fails_the_workflow_and_the_summary_says_no_tests_ran(
    act: str, wheels: Path, tmp_path: Path
) -> None:
    workflow = two_shards(example_workflow())
    plan_steps = workflow["jobs"]["plan"]["steps"]
    plan_step = step_with(workflow, "plan", "plan")
    # -k filters collected node ids: the plan must collect (discover: false, which the example's default of
    # discovering files would not filter), so the plan job gets the test job's Python and pytest first.
    setup = [
        s for s in workflow["jobs"]["test"]["steps"] if "setup-python" in s.get("uses", "") or "pip" in s.get("run", "")
    ]
    plan_steps[plan_steps.index(plan_step) : plan_steps.index(plan_step)] = setup
    plan_step["with"].update({"pytest-args": "tests -k nonexistent_name", "discover": "false", "python": "python"})
    repo = make_repo(tmp_path / "repo", workflow, demo_files())

    run = run_act(act, repo, tmp_path, wheels)
    print(f"act run took {run.seconds:.1f}s; log in {tmp_path / 'act.log'}")

    assert run.returncode != 0, run.log[-3000:]
    jobs = run.job_results()
    assert jobs.get("plan") == "failed", jobs
    assert jobs.get("report") == "failed", jobs
    assert "no tests to run: the plan has no items" in run.log
    assert plan_of(run)["shards"] and not any(shard["items"] for shard in plan_of(run)["shards"])
    summary = (report(run) / "summary.md").read_text()
    assert "no tests ran: the plan has no items" in summary, summary


def test_coverage_true_publishes_complete_coverage_and_uploads_the_merged_files(
    act: str, wheels: Path, tmp_path: Path
) -> None:
    workflow = two_shards(example_workflow())
    for job in ("test", "report"):
        step = next(s for s in workflow["jobs"][job]["steps"] if "command" in s.get("with", {}))
        step["with"]["coverage"] = True
    repo = make_repo(tmp_path / "repo", workflow, demo_files())

    run = run_act(act, repo, tmp_path, wheels)
    print(f"act run took {run.seconds:.1f}s; log in {tmp_path / 'act.log'}")

    assert run.returncode == 0, run.log[-3000:]
    total = plan_of(run)["total"]
    summary = (report(run) / "summary.md").read_text()
    assert "### Coverage" in summary and f"complete \\({total}/{total} shards\\)" in summary, summary
    artifact = json.loads((report(run) / "coverage" / "coverage.json").read_text())
    assert artifact["state"] == "complete" and artifact["totals"]["percent"] is not None
    assert len(artifact["files"]) == 10  # every demo test file, measured in its shard
    assert (report(run) / "coverage" / "coverage.xml").is_file() and (report(run) / "coverage" / "lcov.info").is_file()


def test_the_injected_failure_is_new_then_known(act: str, wheels: Path, failing_run: tuple[Path, ActRun]) -> None:
    repo, first = failing_run  # the example workflow with the failing test and fail-on: new, run once
    assert first.job_results().get("report") == "failed", first.log[-3000:]
    summary = (report(first) / "summary.md").read_text()
    assert "### 🆕 New failures (1)" in summary and "No test history of main to compare with yet" in summary
    assert "test_injected_failure" in summary.split("### 🆕 New failures (1)")[1].split("###")[0]

    work = repo.parent / "second"
    work.mkdir()
    second = run_act(act, repo, work, wheels, caches_of=first)
    print(f"second act run took {second.seconds:.1f}s; log in {work / 'act.log'}")
    summary = (report(second) / "summary.md").read_text()
    assert "### 📌 Known failures (1): not failing this build (--fail-on new)" in summary, summary[:3000]
    known = summary.split("### 📌 Known failures (1)")[1].split("###")[0]
    assert "test_injected_failure" in known and "failing on main since" in known
    assert "New failures" not in summary
    assert second.job_results().get("report") == "succeeded", second.log[-3000:]
    assert INJECTED_ID.endswith("test_injected_failure")
