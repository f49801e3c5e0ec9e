"""``run`` SIGKILLed at each moment that matters (kill_harness.py), then ``aggregate``: the shard never
counts as passed, whatever the folder holds, even when an earlier run of the same shard passed in the
same place (a re-run job in the same workspace, ``local`` run twice).

Real pytest, a real SIGKILL of the ``run`` process, the real aggregate afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="real SIGKILL of a process tree"),
]

HARNESS = Path(__file__).with_name("kill_harness.py")

PROJECT = {
    "tests/test_a.py": "def test_a1():\n    pass\n\n\ndef test_a2():\n    pass\n",
    "tests/test_b.py": """\
        import os
        import signal


        def test_b1():
            pass


        def test_b2():
            # the mid-test moment: the CI machine is lost while this test runs (run and pytest die together)
            if os.environ.get("CI_SHARDS_FAULT") == "mid-test":
                os.kill(int(os.environ["CI_SHARDS_FAULT_PID"]), signal.SIGKILL)
                os.killpg(0, signal.SIGKILL)
        """,
}

MOMENTS = ["before-command", "mid-test", "writing:junit.xml", "writing:failures.jsonl", "writing:outcome.json"]


def harness(root: Path, moment: str, *args: str) -> subprocess.CompletedProcess[str]:
    # a run killed mid-test leaves its work folders (no ``finally`` runs): under the test's folder, not in /tmp
    scratch = root.parent / "tmp"
    scratch.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, str(HARNESS), moment, *args],
        cwd=root,
        env={**os.environ, "TMPDIR": str(scratch)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_shard(root: Path, index: int, moment: str = "none") -> subprocess.CompletedProcess[str]:
    return harness(root, moment, "run", "--plan", "plan.json", "--shard", f"{index}/2", "--pytest", "--out", "res")


def aggregate(root: Path) -> tuple[subprocess.CompletedProcess[str], dict[int, str]]:
    done = harness(root, "none", "aggregate", "--plan", "plan.json", "res", "--format", "json")
    statuses = {s["index"]: s["status"] for s in json.loads(done.stdout)["shards"]} if done.stdout else {}
    return done, statuses


@pytest.fixture(scope="module")
def passed_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project planned into 2 shards (one file each), both run to a pass: the folder a kill lands in."""
    root = tmp_path_factory.mktemp("killed") / "proj"
    for name, text in PROJECT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    done = harness(root, "none", "plan", "--pytest", "--shards", "2", "--granularity", "file", "-o", "plan.json")
    assert done.returncode == 0, done.stderr
    for index in (1, 2):
        done = run_shard(root, index)
        assert done.returncode == 0, done.stderr
    done, statuses = aggregate(root)
    assert done.returncode == 0 and statuses == {1: "passed", 2: "passed"}, done.stderr
    return root


def shard_of_test_b(root: Path) -> int:
    plan = json.loads((root / "plan.json").read_text(encoding="utf-8"))
    return next(s["index"] for s in plan["shards"] if any("test_b" in i for i in s["items"]))


@pytest.mark.parametrize("moment", MOMENTS)
def test_a_run_killed_at_this_moment_never_counts_as_passed(passed_once: Path, tmp_path: Path, moment: str) -> None:
    root = tmp_path / "proj"
    shutil.copytree(passed_once, root)
    index = shard_of_test_b(root)
    killed = run_shard(root, index, moment)
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr)
    done, statuses = aggregate(root)
    assert "Traceback" not in done.stderr
    assert done.returncode == 1, done.stderr
    assert statuses[index] not in {"passed", "empty", "skipped-by-diff"}, done.stderr
    assert statuses[3 - index] == "passed"
    folder = root / "res" / f"shard-{index}-of-2"
    assert not (folder / "outcome.json").exists()  # the earlier run's verdict is gone, and no half of a new one
    assert "no outcome.json" in done.stderr  # the shard's row names the file it lacks
    leftovers = [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
    assert moment.startswith("writing:") or not leftovers
