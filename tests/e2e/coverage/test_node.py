"""The Node path of coverage across shards: ``node --test`` shards under ``NODE_V8_COVERAGE``, folded.

The reference is Node's own coverage of one serial run (``--experimental-test-coverage`` with the
lcov reporter): the folded lines must match it line for line on every line both count (Node also
counts blank and comment lines, which ci-shards does not count as code).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.coverage.test_python import ci_shards, git
from tests.e2e.gitignore import write_gitignore

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("node") is None or not sys.platform.startswith("linux"), reason="needs node"),
]

PROJECT = Path(__file__).resolve().parent / "node-project"
# node's own junit reporter writes no file attribute, so its tests cannot be accounted to planned files;
# the reporter ci-shards ships for node --test does (docs/coverage.md)
REPORTER = Path(__file__).resolve().parents[3] / "examples" / "node" / "junit-reporter.mjs"
NODE_TEST = ["node", "--test", f"--test-reporter={REPORTER}", "--test-reporter-destination={junit}", "{items}"]


def node_reference(root: Path) -> dict[str, dict[int, int]]:
    """Node's own line counts (lcov DA records) of one serial run of every test file."""
    tests = sorted(str(p.relative_to(root)) for p in (root / "test").glob("*.test.js"))
    subprocess.run(
        ["node", "--test", "--experimental-test-coverage", "--test-reporter=lcov",
         "--test-reporter-destination=ref.lcov", *tests],
        cwd=root, check=True, capture_output=True,
    )  # fmt: skip
    counts: dict[str, dict[int, int]] = {}
    current = ""
    for line in (root / "ref.lcov").read_text(encoding="utf-8").splitlines():
        if line.startswith("SF:"):
            current = line[3:]
            counts[current] = {}
        elif line.startswith("DA:"):
            number, hits = line[3:].split(",")[:2]
            counts[current][int(number)] = int(hits)
    return counts


def test_node_shards_fold_to_nodes_own_serial_coverage(tmp_path: Path) -> None:
    root = tmp_path / "node proj ü"
    shutil.copytree(PROJECT, root)
    git(root, "init", "-q")
    write_gitignore(root)
    git(root, "add", "-A")
    git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    done = ci_shards(root, "plan", "--glob", "test/*.test.js", "--shards", "4", "-o", "plan.json")
    assert done.returncode == 0, done.stderr
    for index in range(1, 5):
        done = ci_shards(root, "run", "--shard", f"{index}/4", "--out", "out", "--coverage", "--", *NODE_TEST)
        assert done.returncode == 0, done.stderr
        entry = json.loads((root / "out" / f"shard-{index}-of-4" / "outcome.json").read_text())["coverage"]
        assert entry["tool"] == "v8" and entry["problem"] == "" and entry["files"]
    done = ci_shards(root, "aggregate", "--plan", "plan.json", "out", "--coverage-out", "cov")
    # the tests' verdict is not this test's business (Node 20's JUnit names no file, so aggregate cannot
    # match its cases to the planned files); the coverage fold is
    assert "ci-shards: coverage complete (4/4 shards)" in done.stderr, done.stderr
    artifact: dict[str, Any] = json.loads((root / "cov" / "coverage.json").read_text(encoding="utf-8"))
    assert artifact["tool"]["name"] == "v8" and artifact["label"].startswith("complete (4/4 shards)")
    assert {"src/math.js", "src/text.js"} <= set(artifact["files"])

    reference = node_reference(root)
    for name, f in artifact["files"].items():
        counted = set(f["executed_lines"]) | set(f["missed_lines"])
        node_ran = {n for n, hits in reference[name].items() if hits > 0 and n in counted}
        assert set(f["executed_lines"]) == node_ran, name

    math = artifact["files"]["src/math.js"]
    assert 8 in math["missed_lines"] and 3 in math["executed_lines"]  # sub(5, 2) never takes the a < b branch
    assert math["test_files"]["test/add.test.js"] == [3] or 3 in math["test_files"]["test/add.test.js"]
    text = artifact["files"]["src/text.js"]
    assert {"name": "whisper", "start": 6, "end": 9} in text["functions"]
    assert 7 in text["missed_lines"]

    def ask(location: str) -> dict[str, Any]:
        out = ci_shards(root, "coverage", "query", location, "--artifact", "cov/coverage.json", "--json")
        answer: dict[str, Any] = json.loads(out.stdout)
        return answer

    add = ask("src/math.js:3")
    assert add["answer"] == "EXECUTED" and add["function"] == "add" and add["test_files"] == ["test/add.test.js"]
    assert ask("src/math.js:8")["answer"] == "NOT EXECUTED"
    assert ask("src/math.js:1")["answer"] == "NO COVERAGE"  # a comment
