"""Coverage across shards end to end: real pytest under coverage.py, real shard folders, the real fold.

The project under test has hostile paths (a root with a space and non-ASCII letters, a source file
named that way too), branch coverage asked by its own .coveragerc, an excluded line, and a test that
measures a Python subprocess.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ci_shards.coverage.context_map import parse_ranges, read_table
from ci_shards.coverage.publish import FIGURES
from tests.conftest import DEMO
from tests.e2e.gitignore import write_gitignore

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="runs real shards"),
]

FILES = {
    # warnings are errors: the launcher must not make pytest warn (e.g. "Module already imported")
    "pytest.ini": "[pytest]\nfilterwarnings =\n    error\n",
    ".coveragerc": "[run]\nbranch = True\nsource = .\n[report]\nexclude_lines =\n    pragma: no cover\n",
    "pkg/__init__.py": "",
    "pkg/unused.py": "def nobody():\n    return 'never imported'\n",  # reported at 0 % because of `source`
    "pkg/calc.py": """\
        def add(a, b):
            return a + b


        def sub(a, b):
            if a < b:
                return -(b - a)
            return a - b


        def never():  # pragma: no cover
            return 0
        """,
    "pkg/child.py": """\
        import sys


        def main():
            print("child ran")
            return 0


        if __name__ == "__main__":
            sys.exit(main())
        """,
    "pkg/odd name ü.py": "def shout(text):\n    return text.upper()\n",
    "tests/test_add.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "tests/test_sub.py": "from pkg.calc import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n",
    "tests/test_child.py": """\
        import subprocess
        import sys


        def test_child():
            done = subprocess.run([sys.executable, "-m", "pkg.child"], capture_output=True, text=True)
            assert done.stdout == "child ran\\n"
        """,
    "tests/test_ünï.py": """\
        import importlib.util
        from pathlib import Path

        spec = importlib.util.spec_from_file_location("odd", Path(__file__).parent.parent / "pkg" / "odd name ü.py")
        odd = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(odd)


        def test_shout():
            assert odd.shout("a") == "A"
        """,
}


def make_project(tmp_path: Path) -> Path:
    root = tmp_path / "proj dir ü"
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    git(root, "init", "-q")
    write_gitignore(root)
    git(root, "add", "-A")
    git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    return root


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def ci_shards(root: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "COVERAGE_"))}
    return subprocess.run(
        [sys.executable, "-m", "ci_shards", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def plan(root: Path, shards: int) -> None:
    done = ci_shards(root, "plan", "--pytest", "--shards", str(shards), "--granularity", "file", "-o", "plan.json")
    assert done.returncode == 0, done.stderr


def run(root: Path, index: int, total: int, *extra: str) -> subprocess.CompletedProcess[str]:
    return ci_shards(root, "run", "--shard", f"{index}/{total}", "--pytest", "--out", "out", *extra)


def serial_lines(root: Path) -> dict[str, tuple[list[int], list[int]]]:
    """Executed and missed lines per file (under the root) of one serial `coverage run -m pytest`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    # subprocesses measured the way coverage.py's own docs say: patch = subprocess
    rc = root / ".coveragerc.serial"

    config = (root / ".coveragerc").read_text().replace("[run]\n", "[run]\npatch = subprocess\n", 1)
    rc.write_text(config, encoding="utf-8")
    data = root / ".serial-data"
    for args in (
        [
            "run",
            f"--rcfile={rc}",
            f"--data-file={data}",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:ci_shards",
        ],
        ["combine", f"--rcfile={rc}", f"--data-file={data}"],
        ["json", f"--rcfile={rc}", f"--data-file={data}", "-o", str(root / ".serial.json")],
    ):
        subprocess.run([sys.executable, "-m", "coverage", *args], cwd=root, env=env, check=False, capture_output=True)
    report = json.loads((root / ".serial.json").read_text(encoding="utf-8"))["files"]
    return {
        name: (f["executed_lines"], f["missing_lines"])
        for name, f in report.items()
        if not os.path.isabs(name) and not name.startswith(".")
    }


def folded_lines(artifact: dict[str, Any]) -> dict[str, tuple[list[int], list[int]]]:
    return {name: (f["executed_lines"], f["missed_lines"]) for name, f in artifact["files"].items()}


def test_shards_fold_to_the_serial_run_line_for_line(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    # the change under review: a function no test calls
    with (root / "pkg" / "calc.py").open("a", encoding="utf-8") as handle:
        handle.write("\n\ndef mul(a, b):\n    return a * b\n")
    git(root, "commit", "-qam", "mul")
    plan(root, 2)
    for index in (1, 2):
        done = run(root, index, 2, "--coverage")
        assert done.returncode == 0, done.stderr
        entry = json.loads((root / "out" / f"shard-{index}-of-2" / "outcome.json").read_text())["coverage"]
        assert entry["tool"] == "coverage.py" and entry["problem"] == "" and entry["files"]
        assert entry["source_root"] == str(root.resolve()) and entry["map"] is True
    done = ci_shards(
        root,
        "aggregate",
        "--plan",
        "plan.json",
        "out",
        "--coverage-out",
        "cov",
        "--summary",
        "summary.md",
        "--fail-under",
        "50",
        "--coverage-base",
        "HEAD~1",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    artifact = json.loads((root / "cov" / "coverage.json").read_text(encoding="utf-8"))
    figures = json.loads(done.stdout)["coverage"]  # the verdict JSON carries the coverage figures too
    assert figures["state"] == "complete" and figures["percent"] == artifact["totals"]["percent"]
    assert figures["diff_percent"] == 50.0 and figures["gate"] is None
    assert figures["files"] == str(Path("cov") / "coverage.json")
    assert set(figures) == set(FIGURES)  # the keys an error reports too
    assert artifact["schema"] == "ci-shards/coverage@1"
    assert artifact["state"] == "complete" and artifact["label"].startswith("complete (2/2 shards) @")
    assert artifact["branch"] is True  # the project's .coveragerc asked for it
    assert artifact["totals"]["percent"] is not None
    assert folded_lines(artifact) == serial_lines(root)
    calc = artifact["files"]["pkg/calc.py"]
    assert calc["branches"]["missed"] == [[6, 7]]
    assert calc["excluded_lines"]["11"].startswith("matches the exclusion pattern")
    assert calc["test_files"]["tests/test_sub.py"] == [6, 8]
    assert "pkg/child.py" in artifact["files"]  # measured in a subprocess
    assert artifact["files"]["pkg/unused.py"]["missed_lines"] == [1, 2]  # never imported, yet a source file
    assert artifact["files"]["pkg/odd name ü.py"]["executed_lines"] == [1, 2]
    assert sorted(artifact["files"]["tests/test_ünï.py"]["shards"]) in ([1], [2])
    assert "<?xml" in (root / "cov" / "coverage.xml").read_text() and (root / "cov" / "lcov.info").stat().st_size
    summary = (root / "summary.md").read_text(encoding="utf-8")
    assert "### Coverage" in summary and "2/2 shards" in summary
    assert "**Changed lines** against `HEAD~1`: **50.0 %** (1/2), not executed:\n- `pkg/calc.py`: 16" in summary

    # the query and status commands on the fresh artifact, then after a change and a rename
    def ask(location: str) -> dict[str, Any]:
        out = ci_shards(root, "coverage", "query", location, "--artifact", "cov/coverage.json", "--json")
        assert out.returncode == 0, out.stderr
        answer: dict[str, Any] = json.loads(out.stdout)
        return answer

    assert ask("pkg/calc.py:2")["test_files"] == ["tests/test_add.py"]
    assert ask("pkg/calc.py:7")["answer"] == "NOT EXECUTED"
    assert ask("pkg/calc.py:11")["answer"] == "EXCLUDED"
    assert ask(f"{root / 'pkg' / 'odd name ü.py'}:2")["answer"] == "EXECUTED"
    status = ci_shards(root, "coverage", "status", "--artifact", "cov/coverage.json")
    assert status.stdout == "FRESH\n"
    (root / "pkg" / "calc.py").write_text((root / "pkg" / "calc.py").read_text() + "# edited\n", encoding="utf-8")
    git(root, "mv", "pkg/child.py", "pkg/kid.py")
    assert ask("pkg/calc.py:2")["answer"] == "STALE"
    assert ask("pkg/child.py:5")["answer"] == "STALE (missing)"
    assert ask("pkg/kid.py:5")["answer"] == "STALE"  # newer than the coverage: a test may execute it now
    status = ci_shards(root, "coverage", "status", "--artifact", "cov/coverage.json")
    assert status.stdout.startswith("STALE: 2 of ") and "(1 gone)" in status.stdout


def test_partial_coverage_publishes_no_percentage_and_fails_the_gate(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    plan(root, 3)
    assert run(root, 1, 3, "--coverage").returncode == 0
    assert run(root, 2, 3, "--coverage").returncode == 0
    assert run(root, 3, 3).returncode == 0  # without --coverage: its tests pass, its coverage is missing
    no_gate = ci_shards(root, "aggregate", "--plan", "plan.json", "out", "--coverage-out", "cov", "--format", "json")
    assert no_gate.returncode == 0, no_gate.stderr  # the tests' verdict stands
    figures = json.loads(no_gate.stdout)["coverage"]
    assert (figures["state"], figures["percent"]) == ("partial", None)  # a partial fold has no percentage
    gated = ci_shards(
        root,
        "aggregate",
        "--plan",
        "plan.json",
        "out",
        "--coverage-out",
        "cov",
        "--fail-under",
        "1",
        "--summary",
        "summary.md",
    )
    assert gated.returncode == 1
    assert "cannot be checked" in gated.stderr
    artifact = json.loads((root / "cov" / "coverage.json").read_text(encoding="utf-8"))
    assert artifact["label"] == "partial (2/3 — shard 3 ran without --coverage)"
    assert artifact["totals"]["percent"] is None
    assert 'ci-shards-state="partial"' in (root / "cov" / "coverage.xml").read_text()
    section = (root / "summary.md").read_text(encoding="utf-8").split("### Coverage", 1)[1]
    assert "partial \\(2/3" in section and "%" not in section.replace("--fail-under", "")

    # a corrupt data file: that shard is marked, the other one is still folded
    shard2 = root / "out" / "shard-2-of-3" / "coverage"
    next(shard2.glob("coverage-py*")).write_bytes(b"this is not sqlite")
    done = ci_shards(root, "aggregate", "--plan", "plan.json", "out", "--coverage-out", "cov")
    artifact = json.loads((root / "cov" / "coverage.json").read_text(encoding="utf-8"))
    states = {s["index"]: s["state"] for s in artifact["completeness"]["shards"]}
    assert states == {1: "folded", 2: "corrupt", 3: "no-coverage"}, done.stderr
    assert artifact["files"] and all(f["shards"] == [1] for f in artifact["files"].values())

    # a shard that never started
    shutil.rmtree(root / "out" / "shard-3-of-3")
    artifact_text = ci_shards(root, "aggregate", "--plan", "plan.json", "out", "--coverage-out", "cov")
    assert artifact_text.returncode == 1
    artifact = json.loads((root / "cov" / "coverage.json").read_text(encoding="utf-8"))
    assert "shard 3 never started" in artifact["label"]


def test_killed_shard_says_its_coverage_is_lost(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    (root / "tests" / "test_add.py").write_text(
        "import time\n\n\ndef test_add():\n    time.sleep(600)\n", encoding="utf-8"
    )
    plan(root, 1)
    done = run(root, 1, 1, "--coverage", "--timeout", "2s", "--signal", "KILL", "--grace", "0")
    assert done.returncode == 1
    entry = json.loads((root / "out" / "shard-1-of-1" / "outcome.json").read_text())["coverage"]
    assert entry["problem"].startswith("no coverage data was written")
    assert "coverage: no coverage data" in done.stderr


def test_demo_in_four_shards_equals_a_serial_run(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root)
    # the serial reference runs on a copy of its own while the shards run: the demo's tests mostly sleep (11 s
    # in a row), so the two overlap instead of queueing; the same files under the same relative names
    serial_root = tmp_path / "serial" / "demo"
    shutil.copytree(DEMO, serial_root)
    (serial_root / ".coveragerc").write_text("[run]\n", encoding="utf-8")
    with ThreadPoolExecutor(max_workers=1) as pool:
        serial = pool.submit(serial_lines, serial_root)
        done = ci_shards(root, "local", "--pytest", "--shards", "4", "--coverage", "--out", "res")
        assert done.returncode == 0, done.stderr
        assert "coverage complete (4/4 shards)" in done.stderr
        artifact = json.loads((root / "res" / "coverage.json").read_text(encoding="utf-8"))
        assert folded_lines(artifact) == serial.result()
    assert len(artifact["files"]) == 10


def test_a_shard_whose_coverage_folder_was_lost_makes_the_fold_partial(tmp_path: Path) -> None:
    # issue 20, as a new user found it: the upload lost shard 2's coverage/ folder (or a cache restored
    # half of it); its outcome.json still lists the data file, and the fold said `complete (2/2 shards)`
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root)
    done = ci_shards(root, "plan", "--pytest", "--shards", "2", "-o", "plan.json", "--", "tests")
    assert done.returncode == 0, done.stderr
    with ThreadPoolExecutor(max_workers=2) as pool:  # as two machines would: the demo's tests mostly sleep
        shards = list(pool.map(lambda index: run(root, index, 2, "--coverage"), (1, 2)))
    assert [done.returncode for done in shards] == [0, 0], [done.stderr for done in shards]
    shutil.rmtree(root / "out" / "shard-2-of-2" / "coverage")
    done = ci_shards(root, "aggregate", "--plan", "plan.json", "out", "--coverage-out", "cov")
    assert done.returncode == 0, done.stderr  # the tests' verdict is never affected (docs/coverage.md)
    assert "Traceback" not in done.stderr
    assert "coverage partial (1/2 — shard 2 lost its coverage: 1 of 1 coverage data files" in done.stderr
    assert "complete" not in done.stderr and "%" not in done.stderr.split("coverage partial")[1].split("\n")[0]
    artifact = json.loads((root / "cov" / "coverage.json").read_text(encoding="utf-8"))
    assert artifact["state"] == "partial" and artifact["totals"]["percent"] is None
    shards = {s["index"]: s for s in artifact["completeness"]["shards"]}
    assert shards[1]["state"] == "folded" and shards[2]["state"] == "lost"
    assert str(Path("out") / "shard-2-of-2" / "coverage") in shards[2]["detail"]
    # the fold on a disk that takes 4 KiB per file (`ulimit -f 4`): one line and exit 2, never an internal error
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "COVERAGE_"))}
    done = subprocess.run(
        [sys.executable, "-m", "ci_shards", "aggregate", "--plan", "plan.json", "out", "--coverage-out", "cov2"],
        cwd=root, env=env, capture_output=True, text=True, timeout=240, check=False,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096)),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "cannot write coverage.py's report: File too large" in done.stderr and "Traceback" not in done.stderr
    assert "ci-shards: PASSED: 44 tests" in done.stderr  # the verdict is still reached and said


def test_a_map_per_test_file_records_the_files_and_folds_the_same_lines(tmp_path: Path) -> None:
    """``--coverage-map-per file`` (the cheaper run, issue 24): one context per test file, the same lines."""
    root = make_project(tmp_path)
    plan(root, 1)
    done = run(root, 1, 1, "--coverage", "--coverage-map-per", "file")
    assert done.returncode == 0, done.stderr
    done = ci_shards(root, "aggregate", "--plan", "plan.json", "out", "--coverage-out", "cov")
    assert done.returncode == 0, done.stderr
    artifact = json.loads((root / "cov" / "coverage.json").read_text(encoding="utf-8"))
    contexts = read_table(artifact["contexts"])  # the test files, and the files of tests_ran
    assert contexts and all("::" not in c and c.startswith("tests/") for c in contexts), contexts
    assert folded_lines(artifact) == serial_lines(root)
    calc = artifact["files"]["pkg/calc.py"]
    assert calc["test_files"]["tests/test_sub.py"] == [6, 8]
    by_file = {contexts[c]: lines for lines, cs in calc["context_lines"] for c in parse_ranges(cs)}
    assert by_file["tests/test_sub.py"] == "6,8"
