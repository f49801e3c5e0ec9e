"""The aggregate stage over what the real runner writes: the demo suite planned and run for real
(``ci-shards plan`` / ``ci-shards run`` processes), then aggregated with faults injected."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ci_shards.cli import main
from ci_shards.junit import parse_junit
from ci_shards.model.outcome import Outcome

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
CLI = [sys.executable, "-m", "ci_shards"]


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    """plan.json and three real shard folders of the demo suite (run in parallel)."""
    root = tmp_path_factory.mktemp("real")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    plan = subprocess.run(
        [*CLI, "plan", "--pytest", "--durations", "examples/demo/.test_durations", "--shards", "3",
         "-o", str(root / "plan.json"), "--", "examples/demo/tests"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert plan.returncode == 0, plan.stderr
    runs = [
        subprocess.Popen(
            [
                *CLI,
                "run",
                "--plan",
                str(root / "plan.json"),
                "--shard",
                f"{i}/3",
                "--out",
                str(root / "results"),
                "--pytest",
                "--no-live",
                "--",
                "examples/demo/tests",  # the plan's arguments: the shard's pytest walks what they select
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in (1, 2, 3)
    ]
    for proc in runs:
        _out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
    return root


def _aggregate(plan: Path, results: Path, tmp_path: Path, capsys) -> tuple[int, dict, str]:
    summary = tmp_path / "summary.md"
    code = main(
        ["aggregate", "--plan", str(plan), str(results), "--format", "json", "--summary", str(summary),
         "--junit", str(tmp_path / "merged.xml")]
    )  # fmt: skip
    out = capsys.readouterr().out
    return code, json.loads(out), summary.read_text()


def test_real_shards_account_for_every_demo_test(real_run, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    code, verdict, summary = _aggregate(real_run / "plan.json", real_run / "results", tmp_path, capsys)
    assert code == 0, verdict["reasons"]
    assert verdict["totals"]["tests"] == 44
    assert verdict["accounting"] == {
        "unit": "test", "planned": 44, "missing": [], "duplicated": [], "unplanned": [], "unverified_shards": [],
        "unplanned_shard": {},
    }  # fmt: skip
    assert [s["status"] for s in verdict["shards"]] == ["passed"] * 3
    assert len(parse_junit(tmp_path / "merged.xml")) == 44
    assert "ci-shards: passed" in summary


def test_real_shards_with_faults(real_run, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    results = tmp_path / "artifacts"
    # download-artifact layout: one folder per artifact; shard 3's never arrived
    for i in (1, 2):
        shutil.copytree(
            real_run / "results" / f"shard-{i}-of-3", results / f"ci-shards-shard-{i}-of-3-a1" / f"shard-{i}-of-3"
        )
    # shard 2 re-ran (attempt 2) and its report got truncated mid-write
    shutil.copytree(real_run / "results" / "shard-2-of-3", results / "ci-shards-shard-2-of-3-a2" / "shard-2-of-3")
    second = results / "ci-shards-shard-2-of-3-a2" / "shard-2-of-3"
    outcome = Outcome.from_json(json.loads((second / "outcome.json").read_text()))
    outcome = dataclasses.replace(outcome, runner=dataclasses.replace(outcome.runner, ci_run_attempt=2))
    (second / "outcome.json").write_text(outcome.dumps())  # the runner's own writer, never a hand-made dict
    junit = (second / "junit.xml").read_bytes()
    (second / "junit.xml").write_bytes(junit[: len(junit) // 2])
    plan = json.loads((real_run / "plan.json").read_text())
    code, verdict, summary = _aggregate(real_run / "plan.json", results, tmp_path, capsys)
    assert code == 1
    statuses = [s["status"] for s in verdict["shards"]]
    assert statuses == ["passed", "failed", "never-started"]
    assert "junit.xml is unreadable" in verdict["shards"][1]["reason"]
    assert "ci-shards-shard-2-of-3-a2" in verdict["shards"][1]["source"]  # the latest attempt counts
    assert any("attempt 1" in n for n in verdict["shards"][1]["notes"])
    assert sorted(verdict["accounting"]["missing"]) == sorted(plan["shards"][1]["items"] + plan["shards"][2]["items"])
    assert verdict["totals"]["tests"] == len(plan["shards"][0]["items"])  # everything else still reported
    assert "never-started" in summary
    assert "junit.xml is unreadable" in summary
