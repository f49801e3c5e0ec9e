"""``ci-shards run`` end to end: real processes, real pytest, /proc checks for survivors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from ci_shards.junit import parse_junit
from ci_shards.model.plan import Granularity, Plan, ShardPlan

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")]


def write_plan(path: Path, shards: list[list[str]]) -> Path:
    plan = Plan(
        total=len(shards),
        granularity=Granularity.TEST,
        shards=tuple(ShardPlan(index=i + 1, items=tuple(s), estimated_seconds=1.0) for i, s in enumerate(shards)),
        lower_bound_seconds=1.0,
        unknown_items=0,
    )
    path.write_text(plan.dumps(), encoding="utf-8")
    return path


def ci_shards(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "CI")}  # CI would turn on --live
    return subprocess.run(
        [sys.executable, "-m", "ci_shards", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def outcome(tmp: Path, index: int = 1, total: int = 1) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp / "out" / f"shard-{index}-of-{total}" / "outcome.json").read_text())
    return data


def failures(tmp: Path, index: int = 1, total: int = 1) -> list[dict[str, Any]]:
    text = (tmp / "out" / f"shard-{index}-of-{total}" / "failures.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def junit_cases(tmp: Path, index: int = 1, total: int = 1) -> list[ET.Element]:
    root = ET.parse(tmp / "out" / f"shard-{index}-of-{total}" / "junit.xml").getroot()
    return list(root.iter("testcase"))


def survivors(marker: str) -> list[str]:
    """Live processes whose command line mentions ``marker`` (zombies do not count: they are dead)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            found.append(f"{entry.name} {cmdline}")
    return found


def pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
def test_hung_pytest_test_times_out_and_leaves_no_survivors(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_hang.py").write_text(
        textwrap.dedent(
            """
            import subprocess, sys, time
            def test_ok():
                pass
            def test_hang():
                subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "HANG_MARKER"])
                time.sleep(300)
            def test_after():
                pass
            """
        ).replace("HANG_MARKER", str(tmp_path / "hang-marker"))
    )
    items = ["tests/test_hang.py::test_ok", "tests/test_hang.py::test_hang", "tests/test_hang.py::test_after"]
    write_plan(tmp_path / "plan.json", [items])
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/1",
        "--out",
        "out",
        "--timeout",
        "2s",
        "--grace",
        "1s",
        "--pytest",
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    result = outcome(tmp_path)
    assert result["status"] == "timed-out"
    # Returning at all (ci_shards() gives up after 60 s, the hung test sleeps 300 s) is the claim; how fast
    # depends on the machine's load, so no clock is asserted.
    assert result["attempts"][0]["deadline_to_dead_seconds"] >= 0
    assert survivors(str(tmp_path / "hang-marker")) == []
    cases = {c.get("name"): c for c in junit_cases(tmp_path)}
    assert cases["test_ok"].find("error") is None
    assert cases["test_hang"].find("error").get("type") == "timed-out"  # type: ignore[union-attr]
    assert cases["test_after"].find("error").get("type") == "not-run"  # type: ignore[union-attr]
    kinds = {f["test_id"]: f["kind"] for f in failures(tmp_path)}
    assert kinds["tests/test_hang.py::test_hang"] == "timed-out"
    assert kinds["tests/test_hang.py::test_after"] == "not-run"


def _script(tmp: Path, name: str, body: str) -> Path:
    path = tmp / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.mark.slow
def test_setsid_grandchild_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "escapee.pid"
    _script(
        tmp_path,
        "spawner.py",
        f"""
        import subprocess, sys, time
        code = ("import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "signal.signal(signal.SIGINT, signal.SIG_IGN); open({str(pidfile)!r}, 'w').write(str(os.getpid())); "
                "time.sleep(300)")
        subprocess.Popen([sys.executable, "-c", code, {str(tmp_path / "escapee-marker")!r}], start_new_session=True)
        time.sleep(300)
        """,
    )
    write_plan(tmp_path / "plan.json", [["a::t1"]])
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/1",
        "--out",
        "out",
        "--timeout",
        "1.5s",
        "--grace",
        "0.5s",
        "--signal",
        "SIGTERM",
        "--",
        sys.executable,
        "spawner.py",
        "{items}",
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    result = outcome(tmp_path)
    assert result["status"] == "timed-out"
    assert (result["exit_code"], result["signal"]) == (None, 15)  # the spawner died of the graceful SIGTERM
    escapee = int(pidfile.read_text())
    assert not pid_alive(escapee)
    assert survivors(str(tmp_path / "escapee-marker")) == []


def test_grandchild_holding_the_output_after_exit_is_reported_and_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    _script(
        tmp_path,
        "leaker.py",
        f"""
        import subprocess, sys, pathlib
        daemon = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "daemon-marker"],
                                  start_new_session=True)  # keeps our stdout open, escapes the group
        pathlib.Path({str(pidfile)!r}).write_text(str(daemon.pid))
        items = sys.argv[2:]
        cases = "".join(f'<testcase classname="" name="{{i.split("::")[1]}}" file="{{i.split("::")[0]}}"/>'
                        for i in items)
        pathlib.Path(sys.argv[1]).write_text(f'<testsuites><testsuite name="x">{{cases}}</testsuite></testsuites>')
        print("done, leaving the daemon behind", flush=True)
        """,
    )
    write_plan(tmp_path / "plan.json", [["a::t1", "a::t2"]])
    # the daemon sleeps 300 s and ci_shards() gives up after 60 s: returning proves the run did not wait for it
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/1",
        "--out",
        "out",
        "--leak-timeout",
        "0.3s",
        "--",
        sys.executable,
        "leaker.py",
        "{junit}",
        "{items}",
        cwd=tmp_path,
    )
    result = outcome(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert result["status"] == "passed"
    assert len(result["leaked_processes"]) == 1
    assert "daemon-marker" in result["leaked_processes"][0]
    assert not pid_alive(int(pidfile.read_text()))
    assert "outlived the test command" in proc.stderr


def test_exit_zero_with_zero_tests_is_failed(tmp_path: Path) -> None:
    write_plan(tmp_path / "plan.json", [["a::t1"]])
    code = (
        "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text('<testsuites><testsuite name=\"x\"/></testsuites>')"
    )
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/1",
        "--out",
        "out",
        "--",
        sys.executable,
        "-c",
        code,
        "{junit}",
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    result = outcome(tmp_path)
    assert result["status"] == "failed"
    assert result["executed_tests"] == 0
    assert result["not_run"] == ["a::t1"]


def _two_files(tmp: Path) -> list[str]:
    tests = tmp / "tests"
    tests.mkdir()
    (tests / "test_a.py").write_text("def test_a1():\n    pass\n\ndef test_a2():\n    pass\n")
    (tests / "test_b.py").write_text("def test_b1():\n    pass\n")
    return ["tests/test_a.py::test_a1", "tests/test_a.py::test_a2", "tests/test_b.py::test_b1"]


def test_fewer_files_than_planned_is_failed(tmp_path: Path) -> None:
    items = _two_files(tmp_path)
    write_plan(tmp_path / "plan.json", [items])
    # the command ignores {items} and runs only one of the two planned files; pytest exits 0
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/1",
        "--out",
        "out",
        "--",
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--junitxml={junit}",
        "tests/test_a.py",
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    result = outcome(tmp_path)
    assert result["status"] == "failed"
    assert result["exit_code"] == 0
    assert result["not_run"] == ["tests/test_b.py::test_b1"]
    assert "never reported" in result["reason"]


def test_template_mode_with_items_passes(tmp_path: Path) -> None:
    items = _two_files(tmp_path)
    write_plan(tmp_path / "plan.json", [items[:2], items[2:]])
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/2",
        "--out",
        "out",
        "--",
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--junitxml={junit}",
        "{items}",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    result = outcome(tmp_path, 1, 2)
    assert (result["status"], result["executed_tests"], result["not_run"]) == ("passed", 2, [])


def test_collection_error_is_failed_and_in_failures_jsonl(tmp_path: Path) -> None:
    items = _two_files(tmp_path)
    (tmp_path / "tests" / "test_b.py").write_text("import no_such_module_xyz\n\ndef test_b1():\n    pass\n")
    write_plan(tmp_path / "plan.json", [items])
    proc = ci_shards("run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--pytest", cwd=tmp_path)
    assert proc.returncode == 1
    result = outcome(tmp_path)
    assert result["status"] == "failed"
    assert "collection error" in result["reason"]
    records = failures(tmp_path)
    errors = [r for r in records if r["kind"] == "error" and r["test_id"] == "tests/test_b.py"]
    assert errors and "no_such_module_xyz" in errors[0]["text"]
    assert result["passed"] == 2  # the healthy file still ran


def test_a_test_pytest_rerunfailures_passes_on_a_rerun_is_listed_flaky_and_counted_once(tmp_path: Path) -> None:
    # plain `pytest --reruns 1` passes it ("1 passed, 1 rerun"); the shard passes too, and names it flaky with the
    # failed attempt, as its own --retries do: the plugin had dropped the attempt, so nothing showed the flake
    pytest.importorskip("pytest_rerunfailures")
    counter = tmp_path / "count"
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_f.py").write_text(
        f"import pathlib\n\nCOUNTER = pathlib.Path({str(counter)!r})\n\n\n"
        "def test_flaky():\n"
        "    n = int(COUNTER.read_text()) if COUNTER.exists() else 0\n"
        "    COUNTER.write_text(str(n + 1))\n"
        "    assert n >= 1, 'fails the first time'\n\n\n"
        "def test_stable():\n    pass\n"
    )
    write_plan(tmp_path / "plan.json", [["tests/test_f.py::test_flaky", "tests/test_f.py::test_stable"]])
    argv = ["run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--pytest", "--", "--reruns", "1"]
    proc = ci_shards(*argv, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = outcome(tmp_path)
    assert result["status"] == "passed"
    assert result["flaky_tests"] == ["tests/test_f.py::test_flaky"]
    assert result["executed_tests"] == 2
    flaky = next(c for c in junit_cases(tmp_path) if c.get("name") == "test_flaky")
    assert flaky.find("failure") is None
    assert "fails the first time" in (flaky.find("flakyFailure").get("message") or "")
    assert [f["kind"] for f in failures(tmp_path)] == ["flaky"]


@pytest.mark.slow
def test_flaky_test_with_retries_passes_and_is_marked(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_f.py").write_text(
        textwrap.dedent(
            f"""
            import pathlib
            COUNTER = pathlib.Path({str(counter)!r})
            def test_flaky():
                n = int(COUNTER.read_text()) if COUNTER.exists() else 0
                COUNTER.write_text(str(n + 1))
                assert n >= 1, "fails the first time"
            def test_stable():
                pass
            def test_broken():
                assert False, "always"
            """
        )
    )
    items = ["tests/test_f.py::test_flaky", "tests/test_f.py::test_stable", "tests/test_f.py::test_broken"]
    write_plan(tmp_path / "plan.json", [items[:2], items[2:]])
    proc = ci_shards(
        "run", "--plan", "plan.json", "--shard", "1/2", "--out", "out", "--retries", "2", "--pytest", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    result = outcome(tmp_path, 1, 2)
    assert result["status"] == "passed"
    assert result["flaky_tests"] == ["tests/test_f.py::test_flaky"]
    assert [a["rerun"] for a in result["attempts"]] == [0, 1]
    flaky_case = next(c for c in junit_cases(tmp_path, 1, 2) if c.get("name") == "test_flaky")
    assert flaky_case.find("flakyFailure") is not None
    assert flaky_case.find("failure") is None
    assert [f["kind"] for f in failures(tmp_path, 1, 2)] == ["flaky"]
    # a test failing every time keeps every attempt and fails the shard
    proc = ci_shards(
        "run", "--plan", "plan.json", "--shard", "2/2", "--out", "out", "--retries", "2", "--pytest", cwd=tmp_path
    )
    assert proc.returncode == 1
    broken = junit_cases(tmp_path, 2, 2)[0]
    assert broken.find("failure") is not None
    assert len(broken.findall("rerunFailure")) == 2
    # with --flaky-result fail the flaky shard fails
    counter.unlink()
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/2",
        "--out",
        "out",
        "--retries",
        "1",
        "--flaky-result",
        "fail",
        "--pytest",
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert outcome(tmp_path, 1, 2)["status"] == "failed"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signal_to_ci_shards_mid_run_is_cancelled_with_artifacts(tmp_path: Path, signum: int) -> None:
    started = tmp_path / "started"
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_slow.py").write_text(
        textwrap.dedent(
            f"""
            import pathlib, subprocess, sys, time
            def test_done():
                pass
            def test_slow():
                subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)",
                                  {str(tmp_path / "cancel-marker")!r}])
                pathlib.Path({str(started)!r}).write_text("x")
                time.sleep(300)
            """
        )
    )
    write_plan(tmp_path / "plan.json", [["tests/test_slow.py::test_done", "tests/test_slow.py::test_slow"]])
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ci_shards",
            "run",
            "--plan",
            "plan.json",
            "--shard",
            "1/1",
            "--out",
            "out",
            "--grace",
            "2s",
            "--pytest",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)  # the test sleeps far longer: returning means the signal stopped the run
    assert proc.returncode == 1, err
    result = outcome(tmp_path)
    assert result["status"] == "cancelled"
    cases = {c.get("name"): c for c in junit_cases(tmp_path)}
    assert cases["test_done"].find("error") is None
    assert cases["test_slow"].find("error") is not None
    assert survivors(str(tmp_path / "cancel-marker")) == []


def _peak_rss_kib(pid: int, proc: subprocess.Popen[str]) -> int:
    peak = 0
    while proc.poll() is None:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            break
        time.sleep(0.02)
    return peak


@pytest.mark.slow
def test_50_mb_of_output_keeps_memory_flat(tmp_path: Path) -> None:
    write_plan(tmp_path / "plan.json", [["a::t1"]])
    peaks = {}
    for megabytes in (0, 50):
        code = (
            "import sys, pathlib; line = b'x' * 1023 + b'\\n'\n"
            f"for _ in range({megabytes} * 1024): sys.stdout.buffer.write(line)\n"
            'pathlib.Path(sys.argv[1]).write_text(\'<testsuite name="x"><testcase classname="" name="t1" file="a"/>'
            "</testsuite>')"
        )
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ci_shards",
                "run",
                "--plan",
                "plan.json",
                "--shard",
                "1/1",
                "--out",
                f"out{megabytes}",
                "--no-live",  # the 50 MB go to output.log only (live is on by default under CI=true)
                "--",
                sys.executable,
                "-c",
                code,
                "{junit}",
            ],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        peaks[megabytes] = _peak_rss_kib(proc.pid, proc)
        proc.communicate(timeout=60)
        assert proc.returncode == 0
    log = tmp_path / "out50" / "shard-1-of-1" / "output.log"
    assert log.stat().st_size >= 50 * 1024 * 1024
    assert peaks[50] - peaks[0] < 10 * 1024, peaks  # KiB: the 50 MB never pass through ci-shards' memory


def test_unknown_command_is_never_started(tmp_path: Path) -> None:
    write_plan(tmp_path / "plan.json", [["a::t1"]])
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/1",
        "--out",
        "out",
        "--",
        "no-such-command-xyz",
        "{items}",
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    result = outcome(tmp_path)
    assert result["status"] == "never-started"
    assert "no-such-command-xyz" in result["reason"]
    assert "no-such-command-xyz" in proc.stderr
    assert result["not_run"] == ["a::t1"]


@pytest.mark.slow
def test_200000_items_are_batched_and_none_dropped(tmp_path: Path) -> None:
    items = [f"tests/test_m{i // 1000}.py::test_{i}" for i in range(200_000)]
    write_plan(tmp_path / "plan.json", [items])
    _script(
        tmp_path,
        "fake_runner.py",
        """
        import sys
        out, items = sys.argv[1], sys.argv[2:]
        with open(out, "w") as handle:
            handle.write('<testsuite name="fake">')
            for item in items:
                file, name = item.split("::")
                handle.write(f'<testcase classname="" name="{name}" file="{file}"/>')
            handle.write("</testsuite>")
        """,
    )
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/1",
        "--out",
        "out",
        "--",
        sys.executable,
        "fake_runner.py",
        "{junit}",
        "{items}",
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = outcome(tmp_path)
    assert result["status"] == "passed"
    assert result["executed_tests"] == 200_000
    batches = result["attempts"]
    assert len(batches) > 1
    assert sum(a["items"] for a in batches) == 200_000
    assert sum(a["tests_reported"] for a in batches) == 200_000


def test_empty_shard_passes_as_empty(tmp_path: Path) -> None:
    write_plan(tmp_path / "plan.json", [["a::t1"], []])
    proc = ci_shards("run", "--plan", "plan.json", "--shard", "2/2", "--out", "out", "--", "false", cwd=tmp_path)
    assert proc.returncode == 0
    assert outcome(tmp_path, 2, 2)["status"] == "empty"


def test_private_tmpdir_is_removed_and_shard_env_is_set(tmp_path: Path) -> None:
    write_plan(tmp_path / "plan.json", [["a::t1"], ["a::t2"]])
    code = textwrap.dedent(
        """
        import os, sys, pathlib, json, stat
        tmp = pathlib.Path(os.environ["TMPDIR"])
        (tmp / "ro").mkdir(); (tmp / "ro" / "f").write_text("x"); os.chmod(tmp / "ro", stat.S_IRUSR | stat.S_IXUSR)
        keys = ["TMPDIR", "TEMP", "TMP", "CI_SHARDS_INDEX", "CI_SHARDS_TOTAL", "TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS"]
        pathlib.Path("env.json").write_text(json.dumps({k: os.environ[k] for k in keys}))
        case = '<testcase classname="" name="t2" file="a"/>'
        pathlib.Path(sys.argv[1]).write_text(f'<testsuite name="x">{case}</testsuite>')
        """
    )
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "2/2",
        "--out",
        "out",
        "--",
        sys.executable,
        "-c",
        code,
        "{junit}",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    env = json.loads((tmp_path / "env.json").read_text())
    assert env["TMPDIR"] == env["TEMP"] == env["TMP"]
    assert not Path(env["TMPDIR"]).exists()
    assert (env["CI_SHARDS_INDEX"], env["CI_SHARDS_TOTAL"], env["TEST_SHARD_INDEX"], env["TEST_TOTAL_SHARDS"]) == (
        "2",
        "2",
        "1",
        "2",
    )


def test_missing_report_fails_unless_exit_code_accepted(tmp_path: Path) -> None:
    write_plan(tmp_path / "plan.json", [["a::t1"]])
    proc = ci_shards(
        "run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--", "true", "{items}", cwd=tmp_path
    )
    assert proc.returncode == 1
    result = outcome(tmp_path)
    assert (result["status"], result["reason"]) == ("failed", "no test report")
    cases = junit_cases(tmp_path)
    assert any(c.get("classname") == "ci-shards" and c.find("error") is not None for c in cases)
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/1",
        "--out",
        "out",
        "--accept-exit-code",
        "--",
        "true",
        "{items}",
        cwd=tmp_path,
    )
    assert proc.returncode == 0
    assert "accounting impossible" in outcome(tmp_path)["reason"]


def test_a_coverage_gate_that_fails_a_passing_shard_is_named_in_its_reason(tmp_path: Path) -> None:
    """pytest-cov's --cov-fail-under in a project's addopts (arrow 1.4.0) exits 1 after every test passed: the
    shard still fails, and says why (the line is pytest-cov's own, pytest_cov/plugin.py)."""
    write_plan(tmp_path / "plan.json", [["tests/test_a.py::test_one"]])
    _script(
        tmp_path,
        "gated.py",
        """
        import sys
        with open(sys.argv[1], "w") as handle:
            handle.write('<testsuite><testcase classname="tests.test_a" name="test_one" file="tests/test_a.py"/>'
                         '</testsuite>')
        print("TOTAL 2315 1130 692 0 51%")
        print("FAIL Required test coverage of 99% not reached. Total coverage: 51.21%")
        sys.exit(1)
        """,
    )
    proc = ci_shards(
        "run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--", sys.executable, "gated.py", "{junit}",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1
    result = outcome(tmp_path)
    assert (result["status"], result["executed_tests"]) == ("failed", 1)
    assert result["reason"].startswith(
        "the command exited with code 1 but its report shows no failure: pytest-cov's coverage gate of 99%"
        " (--cov-fail-under, or fail_under in coverage.py's settings) failed on this shard's 51.21%"
    )


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    write_plan(tmp_path / "plan.json", [["a::t1"]])
    assert ci_shards("run", "--plan", "plan.json", "--shard", "3/1", "--", "true", cwd=tmp_path).returncode == 2
    assert ci_shards("run", "--plan", "missing.json", "--shard", "1/1", "--", "true", cwd=tmp_path).returncode == 2
    proc = ci_shards("run", "--plan", "plan.json", "--shard", "1/1", "--timeout", "soon", "--", "true", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def _fenced(stderr: str, needle: str) -> bool:
    """Every line holding ``needle`` sits between ``::stop-commands::T`` and ``::T::``."""
    token = None
    seen = False
    for line in stderr.splitlines():
        if line.startswith("::stop-commands::"):
            token = line.removeprefix("::stop-commands::")
        elif token is not None and line == f"::{token}::":
            token = None
        elif line.startswith("::group::"):
            # a group's title is the data of the group command: GitHub reads one command per line, at
            # its start, so text after ``::group::`` cannot issue another (it echoes the command line)
            continue
        elif needle in line:
            seen = True
            if token is None:
                return False
    return seen


@pytest.mark.parametrize("live", ["--live", "--no-live"])
def test_child_output_cannot_issue_workflow_commands_on_github(tmp_path: Path, live: str) -> None:
    write_plan(tmp_path / "plan.json", [["a::t1"]])
    code = "print('::error::pwned-by-test'); print('::add-mask::x'); raise SystemExit(1)"
    env = {**os.environ, "GITHUB_ACTIONS": "true"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ci_shards",
            "run",
            "--plan",
            "plan.json",
            "--shard",
            "1/1",
            "--out",
            "out",
            live,
            "--",
            sys.executable,
            "-c",
            code,
            "{items}",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert proc.returncode == 1
    assert _fenced(proc.stderr, "pwned-by-test"), proc.stderr
    assert "::group::" in proc.stderr  # the failure tail is folded
    assert "::error::" in proc.stderr.replace("::error::pwned-by-test", "")  # our own annotation still works


def test_planned_file_missing_on_disk_fails_loudly_but_the_rest_runs(tmp_path: Path) -> None:
    items = _two_files(tmp_path)
    write_plan(tmp_path / "plan.json", [[*items, "tests/test_deleted.py::test_gone"]])
    proc = ci_shards("run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--pytest", cwd=tmp_path)
    assert proc.returncode == 1
    result = outcome(tmp_path)
    assert result["status"] == "failed"
    assert result["passed"] == 3
    assert result["not_run"] == ["tests/test_deleted.py::test_gone"]


def test_ids_follow_the_plan_when_rootdir_is_above_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # rootdir = tmp_path, pytest runs in tmp_path/sub
    sub = tmp_path / "sub"
    sub.mkdir()
    items = _two_files(sub)
    (sub / "tests" / "test_b.py").write_text("import no_such_module_xyz\n")
    write_plan(sub / "plan.json", [items])
    proc = ci_shards("run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--pytest", cwd=sub)
    assert proc.returncode == 1
    result = outcome(sub)
    assert result["passed"] == 2
    records = {r["test_id"]: r["kind"] for r in failures(sub)}
    assert records["tests/test_b.py"] == "error"  # the collection error, named as the plan names it


# a conftest that collects non-Python files as items named "" (pygments 2.21.0's tests/snippets/conftest.py):
# their node ids end in "::"
EMPTY_NAMED_ITEMS = """
import pytest


class TextItem(pytest.Item):
    def runtest(self):
        assert self.path.read_text() == "ok\\n"


class TextFile(pytest.File):
    def collect(self):
        yield TextItem.from_parent(self, name="")


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".txt":
        return TextFile.from_parent(parent, path=file_path)
"""


def test_items_named_empty_are_reported_under_the_ids_the_plan_collected(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text(EMPTY_NAMED_ITEMS)
    (tests / "one.txt").write_text("ok\n")
    (tests / "two.txt").write_text("ok\n")
    (tests / "test_plain.py").write_text("def test_plain():\n    pass\n")
    planned = ci_shards(
        "plan", "--pytest", "--shards", "1", "-o", "plan.json", "--", "-p", "no:cacheprovider", cwd=tmp_path
    )
    assert planned.returncode == 0, planned.stderr
    items = json.loads((tmp_path / "plan.json").read_text())["shards"][0]["items"]
    assert sorted(items) == ["tests/one.txt::", "tests/test_plain.py::test_plain", "tests/two.txt::"]
    proc = ci_shards("run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--pytest", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = outcome(tmp_path)
    assert (result["status"], result["passed"], result["not_run"]) == ("passed", 3, [])
    assert sorted(c.get("ci-shards-id", "") for c in junit_cases(tmp_path)) == sorted(items)


def test_items_file_template_runs_pytest_from_an_at_file(tmp_path: Path) -> None:
    items = _two_files(tmp_path)
    write_plan(tmp_path / "plan.json", [items])
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/1",
        "--out",
        "out",
        "--",
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--junitxml={junit}",
        "@{items_file}",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    result = outcome(tmp_path)
    assert (result["status"], result["executed_tests"]) == ("passed", 3)


def test_stale_report_named_by_junit_glob_is_refused(tmp_path: Path) -> None:
    write_plan(tmp_path / "plan.json", [["a::t1"]])
    reports = tmp_path / "reports"
    reports.mkdir()
    old = reports / "old.xml"
    old.write_text('<testsuite name="x"><testcase classname="" name="t1" file="a"/></testsuite>')
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/1",
        "--out",
        "out",
        "--junit",
        "reports/*.xml",
        "--",
        "true",
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert "stale test report" in outcome(tmp_path)["reason"]
    code = "import pathlib; pathlib.Path('reports/old.xml').write_text(pathlib.Path('reports/old.xml').read_text())"
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/1",
        "--out",
        "out",
        "--junit",
        "reports/*.xml",
        "--",
        sys.executable,
        "-c",
        code,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert outcome(tmp_path)["status"] == "passed"


def test_too_many_failures_skip_reruns(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_x.py").write_text("def test_a():\n    assert False\n\ndef test_b():\n    assert False\n")
    write_plan(tmp_path / "plan.json", [["tests/test_x.py::test_a", "tests/test_x.py::test_b"]])
    proc = ci_shards(
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "1/1",
        "--out",
        "out",
        "--retries",
        "2",
        "--max-rerun-failures",
        "1",
        "--pytest",
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert "max-rerun-failures" in proc.stderr
    result = outcome(tmp_path)
    assert [a["rerun"] for a in result["attempts"]] == [0]
    assert result["failed"] == 2


def test_the_projects_pytest_config_is_honoured(tmp_path: Path) -> None:
    # scratch paths given to pytest as separate arguments would move its rootdir/ini search away
    # from the project; this ini renames what counts as a test, so ignoring it loses the test
    (tmp_path / "pytest.ini").write_text("[pytest]\npython_functions = check_*\n")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_cfg.py").write_text("def check_configured():\n    pass\n")
    write_plan(tmp_path / "plan.json", [["tests/test_cfg.py::check_configured"]])
    proc = ci_shards("run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--pytest", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"rootdir: {tmp_path}" in (tmp_path / "out" / "shard-1-of-1" / "output.log").read_text()


def test_rootdir_without_config_is_the_projects_directory(tmp_path: Path) -> None:
    items = _two_files(tmp_path)
    write_plan(tmp_path / "plan.json", [items])
    proc = ci_shards("run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--pytest", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"rootdir: {tmp_path}\n" in (tmp_path / "out" / "shard-1-of-1" / "output.log").read_text()


@pytest.mark.parametrize("mode", ["pytest", "template"])
def test_line_numbers_are_one_based_like_the_editor_shows(tmp_path: Path, mode: str) -> None:
    # pytest counts item locations from 0 (its own xunit1 JUnit writes line="2" for a def on line 3);
    # annotations need the line a person sees: ours (test-line), beside pytest's kept as written (issue 9.5)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_lines.py").write_text("import os\n\ndef test_third_line():\n    assert os\n")
    write_plan(tmp_path / "plan.json", [["tests/test_lines.py::test_third_line"]])
    if mode == "pytest":
        run = ["--pytest"]
    else:
        run = ["--", sys.executable, "-m", "pytest", "-o", "junit_family=xunit1", "--junitxml={junit}", "{items}"]
    proc = ci_shards("run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", *run, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [case] = junit_cases(tmp_path)
    assert (case.get("line"), case.get("ci-shards-line")) == ("2", "3")
    assert [c.line for c in parse_junit(tmp_path / "out" / "shard-1-of-1" / "junit.xml")] == [3]


# pyyaml 6.0.4's tests/legacy_tests/conftest.py, in small: a test function marked with the data files it
# reads becomes a collector with one item per data file, and each item's path is that data file
ITEMS_AT_DATA_FILES = """
import pytest


class DataItem(pytest.Item):
    def runtest(self):
        assert self.path.read_text() == "ok\\n"


class DataCollector(pytest.Collector):
    def collect(self):
        for data in sorted((self.path.parent / "data").iterdir()):
            yield DataItem.from_parent(self, name=data.name, path=data)


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector, name, obj):
    result = yield
    if getattr(obj, "data_driven", False):
        return DataCollector.from_parent(collector, name=name)
    return result
"""
DATA_DRIVEN_TESTS = """
def test_load():
    pass


test_load.data_driven = True


def test_plain():
    pass
"""


def test_items_whose_path_is_a_data_file_keep_their_node_ids(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    (tests / "data").mkdir(parents=True)
    (tests / "conftest.py").write_text(ITEMS_AT_DATA_FILES)
    (tests / "test_data.py").write_text(DATA_DRIVEN_TESTS)
    (tests / "data" / "a.data").write_text("ok\n")
    (tests / "data" / "b.data").write_text("ok\n")
    expected = ["tests/test_data.py::test_load::a.data", "tests/test_data.py::test_load::b.data"]
    expected.append("tests/test_data.py::test_plain")
    planned = ci_shards(
        "plan", "--pytest", "--shards", "1", "-o", "plan.json", "--", "-p", "no:cacheprovider", cwd=tmp_path
    )
    assert planned.returncode == 0, planned.stderr
    assert sorted(json.loads((tmp_path / "plan.json").read_text())["shards"][0]["items"]) == expected
    for plan in (tmp_path / "plan.json", write_plan(tmp_path / "files.json", [["tests/test_data.py"]])):
        proc = ci_shards("run", "--plan", str(plan), "--shard", "1/1", "--out", "out", "--pytest", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        result = outcome(tmp_path)
        assert (result["status"], result["passed"], result["not_run"]) == ("passed", 3, [])
        assert sorted(c.get("ci-shards-id", "") for c in junit_cases(tmp_path)) == expected


# pytest-rerunfailures 16.7's protocol in small: an attempt's failing report is logged with the outcome
# "rerun", then (a setup or call that failed) the attempt's teardown; then the test runs again
RERUN_PROTOCOL = """
import pytest
from _pytest.runner import runtestprotocol


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for attempt in range(2):
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        failed = attempt == 0 and any(r.failed for r in reports)
        for report in reports:
            if failed and report.failed:
                report.outcome = "rerun"
            item.ihook.pytest_runtest_logreport(report=report)
        if not failed:
            break
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
"""
FAILS_ONCE_IN_TEARDOWN = """
import pytest

CALLS = []


@pytest.fixture
def flaky_teardown():
    yield
    CALLS.append(1)
    assert len(CALLS) > 1, "first teardown"


def test_a(flaky_teardown):
    pass


@pytest.fixture
def flaky_setup():
    CALLS.append(2)
    assert len(CALLS) > 2, "first setup"


def test_b(flaky_setup):
    pass


def test_c():
    CALLS.append(3)
    assert len(CALLS) > 4, "first call"
"""


def test_an_attempt_rerunfailures_repeats_is_not_a_test_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(RERUN_PROTOCOL)
    (tmp_path / "tests" / "test_t.py").write_text(FAILS_ONCE_IN_TEARDOWN)
    write_plan(tmp_path / "plan.json", [["tests/test_t.py"]])
    proc = ci_shards("run", "--plan", "plan.json", "--shard", "1/1", "--out", "out", "--pytest", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = outcome(tmp_path)
    assert (result["status"], result["executed_tests"], result["passed"]) == ("passed", 3, 3)
