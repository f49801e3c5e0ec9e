"""A folder after ``--pytest --`` is the run's collection root: the shard's files sit in it, so nothing that
selected tests was dropped (issue 27: `dropped pytest arguments that select tests …: tests` was printed for
every shard of the documented ``local --discover --pytest -- tests``). Since issue 26 a shard's pytest is given
the user's own arguments and selects inside pytest, so nothing is ever dropped: a file named beside its folder
runs once, as in plain pytest (which collects a path given twice once)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _project(root: Path) -> Path:
    (root / "tests").mkdir()
    for name in ("a", "b"):
        (root / "tests" / f"test_{name}.py").write_text(f"def test_{name}():\n    assert True\n")
    return root


TESTS_RUN = re.compile(r"\((\d+) tests? run")


def _local(root: Path, *after: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "VIRTUAL_ENV")}
    argv = [sys.executable, "-m", "ci_shards", "local", "--discover", "--shards", "2", "--pytest", "--", *after]
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    return [
        line
        for log in sorted(root.glob("ci-shards-results/shard-*/console.log"))
        for line in log.read_text().splitlines()
    ]


def test_the_collection_root_is_not_reported_as_dropped(tmp_path: Path) -> None:
    lines = _local(_project(tmp_path), "tests", "-p", "no:cacheprovider")
    assert len([line for line in lines if ": 1 item, timeout" in line]) == 2, lines
    assert not [line for line in lines if "dropped pytest arguments" in line]


def test_a_file_given_beside_its_folder_is_not_dropped_and_runs_once(tmp_path: Path) -> None:
    lines = _local(_project(tmp_path), "tests", "tests/test_a.py", "-p", "no:cacheprovider")
    assert not [line for line in lines if "dropped pytest arguments" in line]
    ran = [int(m.group(1)) for line in lines if (m := TESTS_RUN.search(line))]
    assert len(ran) == 2 and sum(ran) == 2, lines  # test_a and test_b, each once
