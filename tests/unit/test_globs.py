"""One pattern matcher for every file-pattern flag: the same files for the same pattern, and glob characters in
the working directory's own path (``/builds/[ci]/``) taken literally by every one of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ci_shards.cli import main
from ci_shards.common.globs import has_magic, match_files
from ci_shards.model.plan import Granularity, Plan, ShardPlan

RUN = [sys.executable, "-m", "ci_shards", "run", "--plan", "plan.json", "--shard", "1/1", "--out", "out"]
REPORT = '<testsuite name="x"><testcase classname="" name="t1" file="a"/></testsuite>'


@pytest.fixture
def bracketed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose own path holds glob characters, with a file layout every flag can match."""
    root = tmp_path / "ci[1]" / "proj*?"
    for name in ("reports/a.xml", "reports/sub/b.xml", "reports/.hidden.xml", "tests/test_x.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(REPORT if name.endswith(".xml") else "def test_x():\n    pass\n")
    monkeypatch.chdir(root)
    return root


def test_match_files_is_relative_sorted_recursive_and_skips_dot_names(bracketed):
    assert match_files("reports/**/*.xml", cwd=bracketed) == ["reports/a.xml", "reports/sub/b.xml"]
    assert match_files("reports/.*.xml", cwd=bracketed) == ["reports/.hidden.xml"]
    plain = bracketed.parent.parent / "plain"
    plain.mkdir()
    (plain / "c.xml").write_text(REPORT)
    assert match_files(str(plain / "*.xml"), cwd=bracketed) == [str(plain / "c.xml")]  # absolute: as written
    assert match_files("reports", cwd=bracketed) == []  # folders are not files
    assert has_magic("a/*.xml") and has_magic("a[12].xml") and not has_magic("a/b.xml")


def test_every_pattern_flag_matches_under_a_bracketed_working_directory(bracketed, capsys):
    assert main(["junit", "summary", "reports/**/*.xml", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["tests"] == 2
    assert main(["timings", "import", "--junit", "reports/*.xml", "-o", "store.json"]) == 0
    assert main(["plan", "--glob", "tests/*.py", "--shards", "1", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["shards"][0]["items"] == ["tests/test_x.py"]


def test_run_finds_its_junit_report_under_a_bracketed_working_directory(bracketed):
    plan = Plan(
        total=1,
        granularity=Granularity.TEST,
        shards=(ShardPlan(index=1, items=("a::t1",), estimated_seconds=1.0),),
        lower_bound_seconds=1.0,
        unknown_items=0,
    )
    (bracketed / "plan.json").write_text(plan.dumps())
    write = f"import pathlib; pathlib.Path('reports/a.xml').write_text({REPORT!r})"
    proc = subprocess.run(
        [*RUN, "--junit", "reports/*.xml", "--", sys.executable, "-c", write],
        cwd=bracketed,
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"},
        check=False,
    )
    outcome = json.loads((bracketed / "out" / "shard-1-of-1" / "outcome.json").read_text())
    assert (proc.returncode, outcome["status"]) == (0, "passed"), proc.stderr
