"""``ci-shards local`` end to end: the README's command over the demo suite, and Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")]

REPO = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}


@pytest.mark.slow
def test_readme_command_runs_the_demo_in_four_shards(tmp_path: Path) -> None:
    out = tmp_path / "results"
    argv = [
        sys.executable,
        "-m",
        "ci_shards",
        "local",
        "--shards",
        "4",
        "--durations",
        "examples/demo/.test_durations",
        "--out",
        str(out),
        "--pytest",
        "--",
        "examples/demo/tests",
    ]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120, env=_env(), check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    statuses = [json.loads((out / f"shard-{i}-of-4" / "outcome.json").read_text())["status"] for i in range(1, 5)]
    assert statuses == ["passed"] * 4
    executed = sum(
        json.loads((out / f"shard-{i}-of-4" / "outcome.json").read_text())["executed_tests"] for i in range(1, 5)
    )
    assert executed == 44  # every demo test exactly once
    assert "[4/4]" in proc.stderr and "ETA" in proc.stderr
    assert "guess" not in proc.stderr + proc.stdout  # timed: the estimates are the durations'
    assert "passed" in proc.stdout.lower()


@pytest.mark.slow
def test_ctrl_c_stops_every_shard_and_still_reports(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    for n in range(2):
        (tests / f"test_h{n}.py").write_text(
            textwrap.dedent(
                f"""
                import pathlib, subprocess, sys, time
                def test_hang():
                    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)",
                                      {str(tmp_path / "local-marker")!r}])
                    pathlib.Path({str(tmp_path / f"started{n}")!r}).write_text("x")
                    time.sleep(300)
                """
            )
        )
    durations = {f"tests/test_h{n}.py::test_hang": 5.0 for n in range(2)}
    (tmp_path / "durations.json").write_text(json.dumps(durations))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ci_shards",
            "local",
            "--shards",
            "2",
            "--jobs",
            "2",
            "--durations",
            "durations.json",
            "--out",
            "out",
            "--grace",
            "1s",
            "--pytest",
            "--",
            "tests",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    deadline = time.monotonic() + 30
    while not all((tmp_path / f"started{n}").exists() for n in range(2)) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "cancelled" in out
    for n in (1, 2):
        assert json.loads((tmp_path / "out" / f"shard-{n}-of-2" / "outcome.json").read_text())["status"] == "cancelled"
    leftover = subprocess.run(
        ["pgrep", "-f", str(tmp_path / "local-marker")], capture_output=True, text=True, check=False
    )
    assert leftover.stdout.strip() == ""


@pytest.mark.slow
def test_local_prints_each_failure_with_its_trace_and_output_log(tmp_path: Path) -> None:
    """A fresh plan (no timings): the failures are printed with their trace, failing line and the
    shard's output.log, the ETA never says "overdue" while shards are still running, and the
    reports aggregate writes are written."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    (tests / "test_bad.py").write_text(
        textwrap.dedent(
            """
            import time


            def test_bad():
                time.sleep(1.5)  # longer than the fresh plan's guess
                print("@octocat ::error::from the test")
                value = 41
                assert value == 42
            """
        )
    )
    argv = [sys.executable, "-m", "ci_shards", "local", "--shards", "2", "--jobs", "1", "--out", "out"]
    argv += ["--junit-out", "m.xml", "--summary", "s.md", "--failures", "f.jsonl", "--timings-out", "t.json"]
    argv += ["--pytest", "--", "tests"]
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=_env(), check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    err = proc.stderr
    assert "ci-shards local: 2 items in 2 shards, 1 at a time" in err
    # a first run's estimate is a default per test: said to be a guess, where it is given and in the table
    assert "per shard at most (a guess: no timings yet, the shards are balanced by their tests' count)" in err
    assert "  (est.: every estimate was a guess: there were no timings for any planned item)" in proc.stdout
    assert "overdue" not in err
    header = next(line for line in err.splitlines() if line.startswith("── failure 1/1: tests/test_bad.py::test_bad"))
    assert header.endswith(" at tests/test_bad.py:9")  # the failing assert, not the def line
    assert "    >       assert value == 42" in err
    assert "    E       assert 41 == 42" in err
    log = next(line.strip().removeprefix("output: ") for line in err.splitlines() if line.strip().startswith("output:"))
    assert "from the test" in (tmp_path / log).read_text()
    assert "ci-shards: FAILED" in proc.stdout  # the verdict table stays on stdout
    # what aggregate writes, written by local too
    assert (tmp_path / "m.xml").read_text().count("<testcase") == 2
    assert "### ❌ 1 test failed" in (tmp_path / "s.md").read_text()
    records = [json.loads(line) for line in (tmp_path / "f.jsonl").read_text().splitlines()]
    assert [r["test_id"] for r in records if r["kind"] == "failed"] == ["tests/test_bad.py::test_bad"]
    assert "tests/test_ok.py::test_ok" in (tmp_path / "t.json").read_text()
    assert "ci-shards: recorded the measured durations of 2 tests and a per-shard overhead" in proc.stdout + err


# pyyaml 6.0.4's tests/legacy_tests/conftest.py, in small: a function marked ``unittest = True`` becomes an
# item named after its module, so three tests share the node id tests/test_yaml.py::test_yaml.py
SHARED_NODE_IDS = """
import pytest


class FunctionItem(pytest.Item):
    def __init__(self, *, function, **kwargs):
        super().__init__(**kwargs)
        self.function = function

    def runtest(self):
        self.function()


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector, name, obj):
    result = yield
    if getattr(obj, "unittest", False):
        return FunctionItem.from_parent(collector, name=collector.name, function=obj)
    return result
"""
SHARED_NODE_ID_TESTS = """
def check_one():
    pass


def check_two():
    pass


def check_three():
    raise AssertionError("three")


check_one.unittest = check_two.unittest = check_three.unittest = True


def test_plain():
    pass
"""


@pytest.mark.parametrize("plan", ["--pytest", "--discover"])
def test_items_sharing_a_node_id_run_and_count_each_as_plain_pytest(tmp_path: Path, plan: str) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(SHARED_NODE_IDS)
    (tmp_path / "tests" / "test_yaml.py").write_text(SHARED_NODE_ID_TESTS)
    (tmp_path / "tests" / "test_other.py").write_text("def test_other():\n    pass\n")
    out = tmp_path / "results"
    argv = [sys.executable, "-m", "ci_shards", "local", "--shards", "2", "--out", str(out)]
    flags = ["--discover"] if plan == "--discover" else []
    argv += [*flags, "--pytest", "--", "tests", "-p", "no:cacheprovider"]
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=_env(), check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # check_three fails, as in plain pytest
    outcomes = [json.loads(p.read_text()) for p in sorted(out.glob("shard-*/outcome.json"))]
    # plain pytest: "1 failed, 4 passed"
    assert sum(o["executed_tests"] for o in outcomes) == 5
    assert (sum(o["passed"] for o in outcomes), sum(o["failed"] for o in outcomes)) == (4, 1)
    assert "ran more than once" not in proc.stdout + proc.stderr


@pytest.mark.slow
def test_discovery_from_a_subfolder_runs_the_files_named_outside_it_as_plain_pytest(tmp_path: Path) -> None:
    # execnet 2.1.2 from its doc/ folder, `-- ../testing/test_basics.py ../testing/test_xspec.py`: the plan named
    # the files "test_basics.py", the shards' plugin "../testing/test_basics.py"; no result matched the plan, and
    # the run failed (exit 1, "planned tests never ran") where plain pytest passes
    (tmp_path / "tox.ini").write_text("[pytest]\ntestpaths = testing\n")
    (tmp_path / "testing").mkdir()
    (tmp_path / "testing" / "test_a.py").write_text("".join(f"def test_a{n}():\n    pass\n" for n in range(4)))
    (tmp_path / "testing" / "test_b.py").write_text("def test_b():\n    pass\n")
    (tmp_path / "doc").mkdir()
    out = tmp_path / "results"
    argv = [sys.executable, "-m", "ci_shards", "local", "--shards", "2", "--out", str(out), "--discover", "--pytest"]
    argv += ["--", "../testing/test_a.py", "../testing/test_b.py", "-p", "no:cacheprovider"]
    cwd = tmp_path / "doc"
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, env=_env(), check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # plain pytest from doc/: "5 passed"
    outcomes = [json.loads(p.read_text()) for p in sorted(out.glob("shard-*/outcome.json"))]
    assert sum(o["passed"] for o in outcomes) == 5
    assert "never ran" not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["-p", "no:xdist"], "'-p no:xdist' among pytest's options turns pytest-xdist off"),
        (["-p", "no:ci_shards"], "stops pytest from loading the ci-shards plugin"),
    ],
)
def test_workers_pytest_cannot_start_are_refused_before_any_shard(tmp_path: Path, words: list[str], said: str) -> None:
    # each shard had stopped with a usage error of its own, and the verdict read "no outcome.json" twice
    pytest.importorskip("xdist")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    argv = [sys.executable, "-m", "ci_shards", "local", "--shards", "2", "--workers", "2", "--out", "out", "--pytest"]
    proc = subprocess.run(
        [*argv, "--", "tests", *words],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
        check=False,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert said in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists()
