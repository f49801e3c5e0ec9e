"""Issue 8.5: tests the plan does not know are never silently dropped.

Real ``ci-shards plan`` / ``run --pytest`` / ``aggregate`` processes over a small suite in tmp_path:
the plan is made from timings, then a failing test is added to a planned file and a new test file
appears. Every test pytest collects must run in exactly one shard, and the new failure must fail
the run by name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from ci_shards.common.console import Console
from ci_shards.junit import parse_junit
from ci_shards.model.matching import item_file
from ci_shards.model.plan import Granularity, Plan, ShardPlan
from ci_shards.run import runner
from ci_shards.run.command import _arg_cost, env_size
from ci_shards.run.process import CancelToken
from ci_shards.run.settings import RunSettings

pytestmark = [pytest.mark.e2e]

CLI = [sys.executable, "-m", "ci_shards"]
ENV = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}

SUITE = {
    "tests/test_a.py": (
        "import pytest\n\n"
        "def test_a1():\n    pass\n\n"
        "def test_a2():\n    pass\n\n"
        "@pytest.mark.parametrize('p', ['a', 'b::c', 'd/e'])\n"
        "def test_q(p):\n    pass\n"
    ),
    "tests/test_b.py": "def test_b1():\n    pass\n\ndef test_b2():\n    pass\n\ndef test_b3():\n    pass\n",
    "tests/sub/test_c.py": "def test_c1():\n    pass\n",
}
# as the README shows: a pytest-split durations file, the plan made from its keys; test_q is
# recorded function-level, so its parametrized cases are not items of the plan
DURATIONS = {
    "tests/test_a.py::test_a1": 1.0,
    "tests/test_a.py::test_a2": 1.0,
    "tests/test_a.py::test_q": 3.0,
    "tests/test_b.py::test_b1": 2.0,
    "tests/test_b.py::test_b2": 2.0,
    "tests/test_b.py::test_b3": 0.2,
    "tests/sub/test_c.py::test_c1": 0.5,
}
ADDED_FAILING = "tests/test_b.py::test_added_fails"
NEW_FILE_TEST = "tests/new/test_new.py::test_brand_new"
EVERY_TEST = [
    "tests/test_a.py::test_a1",
    "tests/test_a.py::test_a2",
    "tests/test_a.py::test_q[a]",
    "tests/test_a.py::test_q[b::c]",
    "tests/test_a.py::test_q[d/e]",
    "tests/test_b.py::test_b1",
    "tests/test_b.py::test_b2",
    "tests/test_b.py::test_b3",
    ADDED_FAILING,
    "tests/sub/test_c.py::test_c1",
    NEW_FILE_TEST,
]


def ci_shards(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=120, check=False)


def _suite(root: Path) -> Plan:
    for name, text in SUITE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / ".test_durations").write_text(json.dumps(DURATIONS))
    made = ci_shards(
        "plan", "--durations", ".test_durations", "--from-timings", "--shards", "2", "-o", "plan.json", cwd=root
    )
    assert made.returncode == 0, made.stderr
    plan = Plan.from_json(json.loads((root / "plan.json").read_text()))
    assert "tests/test_a.py::test_q" in plan.items
    # the new tests arrive after the plan was made
    with (root / "tests/test_b.py").open("a") as handle:
        handle.write("\ndef test_added_fails():\n    assert 1 == 2\n")
    (root / "tests/new").mkdir()
    (root / "tests/new/test_new.py").write_text("def test_brand_new():\n    pass\n")
    return plan


@pytest.mark.slow
@pytest.mark.parametrize("roots", [["tests"], []], ids=["paths-given", "no-paths"])
def test_tests_the_plan_does_not_know_run_exactly_once_and_a_new_failure_fails_the_run(
    tmp_path: Path, roots: list[str]
) -> None:
    plan = _suite(tmp_path)
    for index in (1, 2):
        ran = ci_shards(
            "run", "--plan", "plan.json", "--shard", f"{index}/2", "--pytest", "--no-live", "--out", "results",
            "--", "-p", "no:cacheprovider", *roots, cwd=tmp_path,
        )  # fmt: skip
        assert ran.returncode in (0, 1), ran.stderr
    verdict_json = tmp_path / "verdict.json"
    agg = ci_shards("aggregate", "--plan", "plan.json", "--format", "json", "results", cwd=tmp_path)
    verdict_json.write_text(agg.stdout)
    assert agg.returncode == 1, agg.stderr
    assert ADDED_FAILING in agg.stderr  # named among the failed tests
    verdict = json.loads(agg.stdout)
    assert verdict["reasons"][0] == "1 test failed"
    acc = verdict["accounting"]
    assert acc["missing"] == [] and acc["duplicated"] == []
    assert acc["unplanned"] == sorted([ADDED_FAILING, NEW_FILE_TEST])

    ran_in: dict[str, list[int]] = {}
    for index in (1, 2):
        for case in parse_junit(tmp_path / f"results/shard-{index}-of-2/junit.xml"):
            ran_in.setdefault(case.test_id, []).append(index)
    assert Counter({t: len(s) for t, s in ran_in.items()}) == Counter(dict.fromkeys(EVERY_TEST, 1))
    ownership = plan.ownership()
    # a function-level item selects its parametrized cases, whatever the brackets hold
    q_shard = ownership.item_shard["tests/test_a.py::test_q"]
    assert [ran_in[f"tests/test_a.py::test_q[{p}]"] for p in ("a", "b::c", "d/e")] == [[q_shard]] * 3
    # a new test in a planned file runs in the file's (lowest) owner; a new file in the unowned shard
    assert ran_in[ADDED_FAILING] == [ownership.file_shard[item_file(ADDED_FAILING)]]
    assert plan.unowned_shard in (1, 2)
    assert ran_in[NEW_FILE_TEST] == [plan.unowned_shard]
    assert acc["unplanned_shard"] == {ADDED_FAILING: ran_in[ADDED_FAILING][0], NEW_FILE_TEST: plan.unowned_shard}


def test_other_shards_collect_only_their_own_files(tmp_path: Path) -> None:
    # the shard's pytest walks the user's selection (tests), never given the shard's files; every file
    # it does not run is left out before it is imported (each of these would fail its collection)
    plan = _suite(tmp_path)
    other = 3 - plan.unowned_shard
    for name in {item_file(i) for i in plan.shard(plan.unowned_shard).items} | {"tests/new/test_new.py"}:
        (tmp_path / name).write_text("import no_such_module_xyz\n")
    ran = ci_shards(
        "run", "--plan", "plan.json", "--shard", f"{other}/2", "--pytest", "--no-live", "--out", "results",
        "--", "tests", cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode in (0, 1), ran.stderr
    outcome = json.loads((tmp_path / f"results/shard-{other}-of-2/outcome.json").read_text())
    assert outcome["errors"] == 0, outcome
    argv = outcome["attempts"][0]["argv"]
    assert " tests " in argv + " " and not any(item_file(i) in argv for i in plan.items)


@pytest.mark.slow
def test_a_file_that_fails_to_import_fails_only_the_shard_that_owns_it(tmp_path: Path) -> None:
    # the unowned shard collects the whole root and so sees every other shard's files too
    plan = _suite(tmp_path)
    owner = plan.ownership().file_shard["tests/test_a.py"]
    assert owner != plan.unowned_shard
    (tmp_path / "tests/test_a.py").write_text("import no_such_module_xyz\n")
    (tmp_path / "tests/test_b.py").write_text(SUITE["tests/test_b.py"])  # without the added failure
    codes = {}
    for index in (1, 2):
        ran = ci_shards(
            "run", "--plan", "plan.json", "--shard", f"{index}/2", "--pytest", "--no-live", "--out", "results",
            "--", "tests", cwd=tmp_path,
        )  # fmt: skip
        codes[index] = ran.returncode
    assert codes == {owner: 1, plan.unowned_shard: 0}
    unowned = json.loads((tmp_path / f"results/shard-{plan.unowned_shard}-of-2/outcome.json").read_text())
    assert (unowned["status"], unowned["attempts"][0]["exit_code"], unowned["errors"]) == ("passed", 0, 0)
    agg = ci_shards("aggregate", "--plan", "plan.json", "--format", "json", "results", cwd=tmp_path)
    accounting = json.loads(agg.stdout)["accounting"]
    assert accounting["duplicated"] == []  # the collection error is reported once, by its owner


@pytest.mark.slow
def test_a_shard_whose_files_exceed_arg_max_runs_in_one_process_with_its_unplanned_tests(
    tmp_path: Path, monkeypatch
) -> None:
    # the shard's files are never on pytest's command line (the plugin selects inside pytest), so
    # files whose paths would not fit ARG_MAX run in one process, tests the plan does not know
    # included; in-process: the CLI has no ARG_MAX override
    deep = "/".join(["d" * 200] * 14)  # ~2,800-byte paths: one per batch, whatever the environment adds
    files = {x: f"tests/{x}/{deep}/test_{x}.py" for x in "abcd"}
    for x, path in files.items():
        (tmp_path / path).parent.mkdir(parents=True)
        (tmp_path / path).write_text(f"def test_{x}1():\n    pass\n")
    with (tmp_path / files["a"]).open("a") as handle:
        handle.write("\ndef test_a_new():\n    pass\n")  # not in the plan: its file's owner runs it
    (tmp_path / "tests/new").mkdir()
    (tmp_path / "tests/new/test_new.py").write_text("def test_brand_new():\n    pass\n")
    mine = [f"{files[x]}::test_{x}1" for x in "acd"]
    plan = Plan(
        total=2,
        granularity=Granularity.TEST,
        shards=(ShardPlan(1, tuple(mine), 1.0), ShardPlan(2, (f"{files['b']}::test_b1",), 5.0)),
        lower_bound_seconds=1.0,
        unknown_items=0,
        unowned_shard=1,
    )
    (tmp_path / "plan.json").write_text(plan.dumps())
    env = {"PATH": os.environ["PATH"]}
    template = [sys.executable, "-m", "pytest", "-p", "ci_shards", "--continue-on-collection-errors", "x"]
    fixed = sum(_arg_cost(a) for a in template) + 256 + 4096
    # room for 1.5 paths after the environment (plus ~1 KiB of the runner's own variables)
    limit = fixed + env_size(env) + 1024 + _arg_cost(files["a"]) * 3 // 2
    monkeypatch.setattr(runner, "become_subreaper", lambda: False)  # not the test process's job
    outcome = runner.run_shard(
        runner.RunOptions(
            plan=plan,
            plan_path=tmp_path / "plan.json",
            shard_index=1,
            settings=RunSettings(out=tmp_path / "out", command=(), pytest=True),
            cwd=tmp_path,
            env=env,
            arg_limit=limit,
        ),
        console=Console(),
        cancel=CancelToken(),
    )
    assert [a["batches"] for a in outcome.attempts] == [1]
    assert outcome.status.value == "passed", outcome.reason
    ran = Counter(c.test_id for c in parse_junit(tmp_path / "out/shard-1-of-2/junit.xml"))
    assert ran == Counter(
        dict.fromkeys([*mine, f"{files['a']}::test_a_new", "tests/new/test_new.py::test_brand_new"], 1)
    )


@pytest.mark.slow
def test_a_command_given_the_ids_of_a_cut_file_is_warned_that_a_test_added_there_runs_nowhere(tmp_path: Path) -> None:
    # with {items} a shard's command runs exactly the ids it is given: test_added_fails, added to test_b.py after
    # the plan cut that file by test id, runs in no shard and no report counts it (conformance run 12 found the same
    # of a doctest in a cut test file). run --pytest runs it (the test above); a command is told so, and how to avoid it
    plan = Plan(
        total=2,
        granularity=Granularity.AUTO,
        shards=(
            ShardPlan(index=1, items=("tests/test_b.py::test_b1", "tests/sub/test_c.py"), estimated_seconds=2.5),
            ShardPlan(index=2, items=("tests/test_b.py::test_b2", "tests/test_b.py::test_b3"), estimated_seconds=2.2),
        ),
        lower_bound_seconds=2.35,
        unknown_items=0,
        files_cut=1,
        unowned_shard=2,
    )
    _suite(tmp_path)
    (tmp_path / "plan.json").write_text(plan.dumps())
    assert plan.files_cut_into_ids() == plan.files_cut_into_ids(2) == ["tests/test_b.py"]
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--junitxml={junit}", "{items}"]
    for index in (1, 2):
        ran = ci_shards(
            "run", "--plan", "plan.json", "--shard", f"{index}/2", "--no-live", "--", *command, cwd=tmp_path
        )
        assert ran.returncode == 0, ran.stderr
        assert "1 test file of this shard is cut into test ids (tests/test_b.py)" in ran.stderr
        assert "plan with --granularity file, or run with --pytest" in ran.stderr
    whole = ci_shards("run", "--plan", "plan.json", "--shard", "1/2", "--no-live", "--pytest", cwd=tmp_path)
    assert whole.returncode == 1 and "cut into test ids" not in whole.stderr  # the added test runs, and fails


@pytest.mark.slow
def test_local_plans_whole_files_for_a_command_given_items_so_a_test_added_to_a_timed_file_runs(tmp_path: Path) -> None:
    # 4 s of timed tests in test_big.py and 1 s in test_small.py over 2 shards: balance would cut test_big.py by test
    # id, and test_added, written after the timings, would run nowhere under a command given {items} (a green
    # verdict of 5 tests where plain pytest runs 6). Planned for such a command by discovery, the files stay whole
    big = "".join(f"def test_{n}():\n    pass\n\n" for n in ("b1", "b2", "b3", "b4", "added"))
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_big.py").write_text(big)
    (tmp_path / "tests/test_small.py").write_text("def test_s():\n    pass\n")
    timings = {f"tests/test_big.py::test_{n}": 1.0 for n in ("b1", "b2", "b3", "b4")} | {
        "tests/test_small.py::test_s": 1.0
    }
    (tmp_path / ".test_durations").write_text(json.dumps(timings))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--junitxml={junit}", "{items}"]
    argv = [
        "local",
        "--shards",
        "2",
        "--discover",
        "--durations",
        ".test_durations",
        "--out",
        "results",
        "--",
        *command,
    ]
    ran = ci_shards(*argv, cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "whole test files planned" in ran.stderr and "cut into test ids" not in ran.stderr
    cases = [c for i in (1, 2) for c in parse_junit(tmp_path / f"results/shard-{i}-of-2/junit.xml")]
    assert sorted(c.test_id for c in cases) == sorted([*timings, "tests/test_big.py::test_added"])
    cut = ci_shards(*argv[:6], "--granularity", "auto", *argv[6:], cwd=tmp_path)  # asked for: cut, and warned
    assert "1 test file is cut into test ids (tests/test_big.py)" in cut.stderr, cut.stderr
