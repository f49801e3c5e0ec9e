"""``run`` / ``local`` on hostile inputs: real processes, one clear line and exit 2, or a verdict after Ctrl-C."""

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

from ci_shards.run.process import CancelToken, Limits, run_process
from tests.e2e.run.test_shard import ci_shards, pid_alive, write_plan

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")]


def test_out_folder_that_cannot_be_created_is_exit_2_naming_it(tmp_path: Path) -> None:
    write_plan(tmp_path / "plan.json", [["a::t1"]])
    proc = ci_shards("run", "--plan", "plan.json", "--shard", "1/1", "--out", "/proc/nope", "--", "true", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "/proc/nope/shard-1-of-1: cannot write the results folder (--out)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_local_out_folder_that_cannot_be_created_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "items.txt").write_text("a::t1\n")
    argv = ["local", "--items", "items.txt", "--shards", "1", "--out", "/proc/nope", "--", "true", "{items}"]
    proc = ci_shards(*argv, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "/proc/nope: cannot write the results folder (--out)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_item_over_the_per_argument_limit_is_a_usage_error(tmp_path: Path) -> None:
    huge = "tests/test_x.py::test_" + "x" * 140_000  # over MAX_ARG_STRLEN, far under ARG_MAX
    write_plan(tmp_path / "plan.json", [["tests/test_x.py::test_a", huge]])
    proc = ci_shards(
        "run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--", "true", "{items}", cwd=tmp_path
    )
    assert proc.returncode == 2, proc.stderr
    assert "over Linux's per-argument limit (MAX_ARG_STRLEN, 131072 bytes)" in proc.stderr
    assert "{items_file}" in proc.stderr and "--pytest" in proc.stderr
    assert "Argument list too long" not in proc.stderr


@pytest.mark.slow
def test_a_crash_in_the_wait_loop_kills_the_tree_before_it_propagates(tmp_path: Path) -> None:
    # signal 99 does not exist: killpg at the deadline raises EINVAL inside the wait loop
    pidfile = tmp_path / "child.pid"
    code = f"import os, pathlib, time; pathlib.Path({str(pidfile)!r}).write_text(str(os.getpid())); time.sleep(60)"
    with (tmp_path / "spool").open("w+b") as spool, pytest.raises(OSError, match="Invalid argument"):
        run_process(
            [sys.executable, "-c", code],
            env=dict(os.environ),
            cwd=tmp_path,
            spool=spool,
            limits=Limits(deadline=time.monotonic() + 1.0, graceful_signal=99),
            cancel=CancelToken(),
        )
    assert not pid_alive(int(pidfile.read_text()))


@pytest.mark.slow
def test_ctrl_c_before_every_shard_started_still_prints_the_verdict(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_a.py").write_text("def test_fast():\n    pass\n")
    for name in ("b", "c"):
        (tests / f"test_{name}.py").write_text(
            textwrap.dedent(
                f"""
                import pathlib, time
                def test_slow():
                    pathlib.Path({str(tmp_path / ("started-" + name))!r}).write_text("x")
                    time.sleep(300)
                """
            )
        )
    # the fast file goes to shard 1: it ends before the interrupt, shard 2 is running, shard 3 never starts
    durations = {"tests/test_a.py::test_fast": 30.0, "tests/test_b.py::test_slow": 20.0}
    durations["tests/test_c.py::test_slow"] = 10.0
    (tmp_path / "durations.json").write_text(json.dumps(durations))
    argv = ["local", "--shards", "3", "--jobs", "1", "--durations", "durations.json", "--out", "out"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ci_shards", *argv, "--grace", "1s", "--pytest", "--", "tests"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"},
    )
    deadline = time.monotonic() + 30
    while not (tmp_path / "started-b").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "not a directory" not in err
    assert not (tmp_path / "out" / "shard-3-of-3").exists()
    status = {
        n: json.loads((tmp_path / "out" / f"shard-{n}-of-3" / "outcome.json").read_text())["status"] for n in (1, 2)
    }
    assert status == {1: "passed", 2: "cancelled"}
    assert "never-started" in out and "cancelled" in out
    assert "tests/test_c.py::test_slow" in out
