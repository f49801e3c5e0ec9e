"""``process.run_process`` in this process: the shard's tree dies, other children of the caller do not."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ci_shards.run.process import CancelToken, Limits, become_subreaper, run_process

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def test_leak_is_killed_but_the_callers_own_child_survives(tmp_path: Path) -> None:
    # as `ci-shards run` does: without it a setsid orphan goes to init and cannot be found
    assert become_subreaper()
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    pidfile = tmp_path / "leak.pid"
    code = (
        "import subprocess, sys, pathlib; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True); "
        f"pathlib.Path({str(pidfile)!r}).write_text(str(p.pid))"
    )
    try:
        with (tmp_path / "spool").open("w+b") as spool:
            result = run_process(
                [sys.executable, "-c", code],
                env=dict(os.environ),
                cwd=tmp_path,
                spool=spool,
                limits=Limits(leak_timeout=0.2),
                cancel=CancelToken(),
            )
        leak = int(pidfile.read_text())
        assert result.exit_code == 0
        assert len(result.leaked) == 1 and result.leaked[0].startswith(f"{leak} ")
        deadline = time.monotonic() + 5
        while _alive(leak) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(leak)
        assert _alive(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()


def test_deadline_reports_how_long_the_tree_took_to_die(tmp_path: Path) -> None:
    code = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)"
    with (tmp_path / "spool").open("w+b") as spool:
        result = run_process(
            [sys.executable, "-c", code],
            env=dict(os.environ),
            cwd=tmp_path,
            spool=spool,
            limits=Limits(deadline=time.monotonic() + 0.5, grace=0.3),
            cancel=CancelToken(),
        )
    assert result.timed_out
    assert result.signal == 9  # it ignored SIGINT, so the grace ran out
    assert result.deadline_to_dead is not None
    assert result.deadline_to_dead >= 0.3  # the grace was waited out before SIGKILL (no upper bound: load-dependent)
