"""The stand-in actions keep the rules of the real ones that our workflows depend on (stand-ins/README.md here).

Each test runs a stand-in's script with bash the way the runner would, with its inputs as env values.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
import time
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.e2e

STAND_INS = Path(__file__).resolve().parent / "stand-ins"


def run(action: str, tmp_path: Path, values: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], str]:
    step = yaml.safe_load((STAND_INS / action / "action.yml").read_text())["runs"]["steps"][0]
    out = tmp_path / "output.txt"
    out.write_text("")
    env = {key: "" for key in step.get("env", {})}
    env.update(values)
    env.update(
        PATH=os.environ["PATH"],
        GITHUB_OUTPUT=str(out),
        GITHUB_RUN_ID="7",
        GITHUB_WORKSPACE=str(tmp_path / "ws"),
        CI_SHARDS_STANDIN_ROOT=str(tmp_path / "root"),
    )
    (tmp_path / "ws").mkdir(exist_ok=True)
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=tmp_path / "ws", env=env, capture_output=True, text=True, check=False
    )
    return done, out.read_text()


def shard_folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "ws" / "results" / name
    folder.mkdir(parents=True)
    (folder / "junit.xml").write_text(f"<testsuite name='{name}'/>")
    (folder / ".hidden").write_text("x")
    return folder


def test_an_artifact_name_can_be_uploaded_once(tmp_path: Path) -> None:
    shard_folder(tmp_path, "shard-1-of-2")
    values = {"NAME": "s1", "PATHS": "results", "IF_NO_FILES": "error", "OVERWRITE": "false", "HIDDEN": "false"}
    first, _ = run("upload-artifact", tmp_path, values)
    assert first.returncode == 0, first.stderr
    stored = tmp_path / "root" / "artifacts" / "7" / "s1"
    assert (stored / "shard-1-of-2" / "junit.xml").is_file()
    assert not (stored / "shard-1-of-2" / ".hidden").exists()  # hidden files are skipped since v4.4
    again, _ = run("upload-artifact", tmp_path, values)
    assert again.returncode != 0
    assert "409" in again.stderr
    replaced, _ = run("upload-artifact", tmp_path, {**values, "OVERWRITE": "true"})
    assert replaced.returncode == 0, replaced.stderr


def test_no_files_is_an_error_only_when_asked(tmp_path: Path) -> None:
    values = {"NAME": "x", "PATHS": "missing/*", "IF_NO_FILES": "error", "OVERWRITE": "false", "HIDDEN": "false"}
    done, _ = run("upload-artifact", tmp_path, values)
    assert done.returncode != 0
    warned, _ = run("upload-artifact", tmp_path, {**values, "IF_NO_FILES": "warn"})
    assert warned.returncode == 0
    assert "::warning::" in warned.stdout


def test_download_by_pattern_keeps_one_folder_per_artifact_unless_merged(tmp_path: Path) -> None:
    for index in (1, 2):
        (tmp_path / "ws" / "results").mkdir(parents=True, exist_ok=True)
        shard_folder(tmp_path, f"shard-{index}-of-2")
        up = {"NAME": f"ci-shards-shard-{index}", "PATHS": "results", "IF_NO_FILES": "error", "OVERWRITE": "false"}
        done, _ = run("upload-artifact", tmp_path, {**up, "HIDDEN": "false"})
        assert done.returncode == 0, done.stderr
        subprocess.run(["rm", "-rf", str(tmp_path / "ws" / "results")], check=True)
    split, _ = run("download-artifact", tmp_path, {"PATTERN": "ci-shards-shard-*", "DEST": str(tmp_path / "a")})
    assert split.returncode == 0, split.stderr
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["ci-shards-shard-1", "ci-shards-shard-2"]
    merged, _ = run(
        "download-artifact", tmp_path, {"PATTERN": "ci-shards-*", "DEST": str(tmp_path / "m"), "MERGE": "true"}
    )
    assert merged.returncode == 0, merged.stderr
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["shard-1-of-2", "shard-2-of-2"]
    none, _ = run("download-artifact", tmp_path, {"PATTERN": "other-*", "DEST": str(tmp_path / "n")})
    assert none.returncode == 0  # the real action finds 0 artifacts and succeeds
    missing, _ = run("download-artifact", tmp_path, {"NAME": "ci-shards-plan", "DEST": str(tmp_path / "p")})
    assert missing.returncode != 0
    assert "Artifact not found for name: ci-shards-plan" in missing.stderr


def test_cache_restore_keys_pick_the_newest_and_entries_are_immutable(tmp_path: Path) -> None:
    store = tmp_path / "ws" / ".ci-shards" / "timings.json"
    store.parent.mkdir(parents=True)
    for age, run_id in ((60, "100"), (30, "101")):
        store.write_text(run_id)
        saved, _ = run("cache/save", tmp_path, {"KEY": f"t-Linux-{run_id}", "PATHS": ".ci-shards/timings.json"})
        assert saved.returncode == 0, saved.stderr
        created = time.time() - age  # distinct creation times without sleeping
        os.utime(tmp_path / "root" / "cache" / f"t-Linux-{run_id}.tar", (created, created))
    store.write_text("changed")
    again, _ = run("cache/save", tmp_path, {"KEY": "t-Linux-101", "PATHS": ".ci-shards/timings.json"})
    assert "Unable to reserve cache" in again.stdout
    with tarfile.open(tmp_path / "root" / "cache" / "t-Linux-101.tar") as tar:
        member = tar.extractfile("workspace/.ci-shards/timings.json")
        assert member is not None and member.read() == b"101"
    store.unlink()
    restored, outputs = run("cache/restore", tmp_path, {"KEY": "t-Linux-200", "RESTORE_KEYS": "t-Linux-\n"})
    assert restored.returncode == 0, restored.stderr
    assert store.read_text() == "101"
    assert "cache-hit=false" in outputs and "cache-matched-key=t-Linux-101" in outputs
    miss, outputs = run("cache/restore", tmp_path, {"KEY": "other", "RESTORE_KEYS": "nope-"})
    assert miss.returncode == 0 and "cache-matched-key=\n" in outputs
