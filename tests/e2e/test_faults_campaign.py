"""A sample of benchmarks/faults.py (issue 20) as a slow test: the campaign's clean flow, then the cases
that once hid data (a shard's coverage data file emptied: the fold said complete, with fewer lines).
The whole campaign is run by hand; its table is in docs/benchmarks.md."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(
        not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("setpriv") is None,
        reason="the campaign runs as root (setpriv, tmpfs)",
    ),
]


def test_the_campaign_finds_nothing_hidden_in_a_sample(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    argv = [sys.executable, str(REPO / "benchmarks" / "faults.py"), "--work", str(tmp_path / "work")]
    argv += ["--only", "coverage_data/empty", "--random", "1", "--json-out", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text(encoding="utf-8"))
    assert [r["case"] for r in results] == [f"coverage_data/empty/{i}/0" for i in (1, 2, 3)]
    assert not any(r["problems"] or r["hidden"] or r["traceback"] for r in results)
