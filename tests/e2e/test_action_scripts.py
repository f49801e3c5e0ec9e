"""The bash of action.yml's steps, run for real (bash + the real ci-shards CLI), without a workflow runner.

Each test takes a step's `run:` script and `env:` names from action.yml, gives the env the values the runner would
substitute for the inputs, and runs it in a temporary directory. This pins down what the act e2e cannot cheaply
vary: multi-line globs, quoting in test-command, a broken quote failing loudly, and the verdict mapping.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CI_SHARDS = Path(sys.executable).with_name("ci-shards")


def step(name: str) -> dict[str, Any]:
    steps = yaml.safe_load((REPO / "action.yml").read_text())["runs"]["steps"]
    found: dict[str, Any] = next(s for s in steps if s.get("name") == name)
    return found


def run_step(name: str, cwd: Path, values: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the step's script with bash: every env name it declares gets a value (empty unless given)."""
    spec = step(name)
    env = {key: "" for key in spec.get("env", {})}
    for key, value in spec.get("env", {}).items():
        if "${{" not in str(value):  # literal env values (the SPLIT helper) are part of the step
            env[key] = str(value)
    env.update(values)
    env.update(PATH=os.environ["PATH"], HOME=os.environ.get("HOME", "/tmp"), GITHUB_OUTPUT=str(cwd / "output.txt"))
    env.setdefault("GITHUB_STEP_SUMMARY", str(cwd / "summary.txt"))
    (cwd / "output.txt").touch()
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", spec["run"]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def cli() -> dict[str, str]:
    if not CI_SHARDS.exists():
        pytest.skip(f"the ci-shards console script is not installed next to {sys.executable}")
    return {"CI_SHARDS": str(CI_SHARDS), "CI_SHARDS_PYTHON": sys.executable}


def test_plan_takes_one_glob_per_line_and_the_shard_count(cli: dict[str, str], tmp_path: Path) -> None:
    for rel in ("a/test_1.txt", "a/test_2.txt", "b/test_3.txt", "c/test_4.txt"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text("x")
    done = run_step(
        "Plan",
        tmp_path,
        {**cli, "GLOB": "a/*.txt\n\nb/*.txt\n", "SHARDS": "2", "GRANULARITY": "file", "PLAN_DIR": str(tmp_path / "p")},
    )
    assert done.returncode == 0, done.stderr
    plan = json.loads((tmp_path / "p" / "plan.json").read_text())
    items = sorted(item for shard in plan["shards"] for item in shard["items"])
    assert items == ["a/test_1.txt", "a/test_2.txt", "b/test_3.txt"]
    assert plan["total"] == 2
    outputs = (tmp_path / "output.txt").read_text()
    assert "matrix<<" in outputs and "plan-digest<<" in outputs


def test_a_broken_quote_in_pytest_args_stops_the_plan_with_one_line(cli: dict[str, str], tmp_path: Path) -> None:
    values = {**cli, "PYTEST": "true", "PYTEST_ARGS": "tests -k 'unclosed", "PLAN_DIR": str(tmp_path / "p")}
    done = run_step("Plan", tmp_path, values)
    assert done.returncode == 2
    assert "input pytest-args: No closing quotation" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "p" / "plan.json").exists()


def test_run_passes_test_command_words_as_given(cli: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "items.txt").write_text("one\ntwo\n")
    done = subprocess.run(
        [str(CI_SHARDS), "plan", "--items", "items.txt", "--shards", "1", "--output", "plan.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    record = "import json, sys; open('argv.json', 'w').write(json.dumps(sys.argv[1:]))"
    command = f'{sys.executable} -c "{record}" \'two words\' "$HOME" {{items}}'
    values = {
        **cli,
        "SHARD": "1/1",
        "TEST_COMMAND": command,
        "TIMEOUT": "1m",
        "RETRIES": "0",
        "PLAN": str(tmp_path / "plan.json"),
        "OUT": str(tmp_path / "results"),
    }
    done = run_step("Run the shard", tmp_path, values)
    # The recorder writes no JUnit, so the shard cannot pass; the point here is the argv it was given.
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv == ["two words", "$HOME", "one", "two"], done.stderr
    assert (tmp_path / "results" / "shard-1-of-1" / "outcome.json").is_file()


def test_run_without_a_command_is_a_usage_error(cli: dict[str, str], tmp_path: Path) -> None:
    done = run_step("Run the shard", tmp_path, {**cli, "SHARD": "1/1", "PLAN": str(tmp_path / "plan.json")})
    assert done.returncode == 2
    assert "needs the input test-command" in done.stdout


@pytest.mark.parametrize(("status", "fail", "code"), [("0", "true", 0), ("1", "true", 1), ("1", "false", 0)])
def test_verdict_step_fails_only_when_asked(tmp_path: Path, status: str, fail: str, code: int) -> None:
    verdict = {"0": "passed", "1": "failed"}[status]
    done = run_step("Verdict", tmp_path, {"STATUS": status, "VERDICT": verdict, "FAIL": fail})
    assert done.returncode == code, done.stdout + done.stderr
    assert f"ci-shards verdict: {verdict}" in done.stdout


def test_an_unknown_command_is_refused(tmp_path: Path) -> None:
    done = run_step("Check the command", tmp_path, {"COMMAND": "deploy\n::set-output name=x::y", "RUNNER_OS": "Linux"})
    assert done.returncode == 2
    # The echoed value cannot start a workflow command of its own on a new line.
    assert "\n::set-output" not in done.stdout
    assert "must be plan, run, aggregate or comment" in done.stdout


def test_aggregate_reports_a_missing_shard_and_fills_the_job_summary(cli: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "items.txt").write_text("one\ntwo\n")
    planned = subprocess.run(
        [str(CI_SHARDS), "plan", "--items", "items.txt", "--shards", "2", "--output", "plan.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert planned.returncode == 0, planned.stderr
    values = {
        **cli,
        "PLAN": str(tmp_path / "plan.json"),
        "SHARDS_DIR": str(tmp_path / "shards"),  # nothing arrived
        "REPORT": str(tmp_path / "report"),
        "TIMINGS": ".ci-shards/timings.json",
        "COMMENT": "false",
        "COMMENT_MODE": "always",
    }
    done = run_step("Aggregate", tmp_path, values)
    assert done.returncode == 0, done.stderr  # the verdict is decided in the Verdict step
    outputs = (tmp_path / "output.txt").read_text()
    assert "verdict=failed" in outputs and "status=1" in outputs
    assert f"summary-path={tmp_path / 'report' / 'summary.md'}" in outputs
    summary = (tmp_path / "summary.txt").read_text()
    assert "never-started" in summary.replace("\\-", "-")
    assert summary == (tmp_path / "report" / "summary.md").read_text()


@pytest.mark.parametrize("allow_empty", [True, False])
def test_an_empty_test_set_fails_unless_allow_empty(cli: dict[str, str], tmp_path: Path, allow_empty: bool) -> None:
    """Nothing to test: the matrix still has a leg per shard (never an empty matrix) and each leg's folder says
    `empty`. With allow-empty the legs and the report pass; without it the plan step fails after writing the plan
    and its outputs, and the report fails saying no tests ran (issue 8)."""
    plan_dir = tmp_path / "p"
    flag = {"ALLOW_EMPTY": "true" if allow_empty else "false"}
    (tmp_path / "items.txt").write_text("")  # (a glob that matches nothing is refused as a likely typo)
    done = run_step("Plan", tmp_path, {**cli, **flag, "ITEMS": "items.txt", "SHARDS": "2", "PLAN_DIR": str(plan_dir)})
    assert done.returncode == (0 if allow_empty else 1), done.stderr
    if not allow_empty:
        assert "ci-shards: no tests to run: the plan has no items" in done.stderr
    outputs = (tmp_path / "output.txt").read_text()
    assert "empty<<" in outputs and "\ntrue\n" in outputs
    matrix = json.loads(outputs.split("matrix<<", 1)[1].splitlines()[1])
    assert [leg["label"] for leg in matrix["include"]] == ["1/2", "2/2"]
    for leg in matrix["include"]:
        values = {
            **cli,
            **flag,
            "SHARD": leg["label"],
            "TEST_COMMAND": "false {items}",
            "TIMEOUT": "1m",
            "RETRIES": "0",
            "PLAN": str(plan_dir / "plan.json"),
            "OUT": str(tmp_path / "shards" / f"artifact-{leg['shard']}"),
        }
        ran = run_step("Run the shard", tmp_path, values)
        assert ran.returncode == (0 if allow_empty else 1), ran.stderr
        shard = json.loads(
            (
                tmp_path / "shards" / f"artifact-{leg['shard']}" / f"shard-{leg['shard']}-of-2" / "outcome.json"
            ).read_text()
        )
        assert shard["status"] == "empty"
    (tmp_path / "output.txt").write_text("")
    values = {
        **cli,
        **flag,
        "PLAN": str(plan_dir / "plan.json"),
        "SHARDS_DIR": str(tmp_path / "shards"),
        "REPORT": str(tmp_path / "report"),
        "TIMINGS": ".ci-shards/timings.json",
        "COMMENT": "false",
        "COMMENT_MODE": "always",
    }
    done = run_step("Aggregate", tmp_path, values)
    assert done.returncode == 0, done.stderr
    verdict = "passed" if allow_empty else "failed"
    assert f"verdict={verdict}" in (tmp_path / "output.txt").read_text(), done.stderr
    if not allow_empty:
        assert "no tests ran: the plan has no items" in (tmp_path / "summary.txt").read_text()


def test_the_plan_is_uploaded_also_after_a_failed_plan_step() -> None:
    # an empty plan fails the plan step; its plan.json still goes up so the report job can say why
    assert "steps.plan.outputs.plan-digest != ''" in step("Upload the plan")["if"]


class _GitHub(BaseHTTPRequestHandler):
    """Just enough of the issues-comments REST API: list (empty) and create; every request is recorded."""

    requests: ClassVar[list[tuple[str, str, str, dict[str, Any] | None]]] = []

    def _reply(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.requests.append(("GET", self.path, self.headers.get("Authorization", ""), None))
        self._reply(200, [])

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append(("POST", self.path, self.headers.get("Authorization", ""), body))
        self._reply(201, {"id": 7, "html_url": "http://127.0.0.1/c/7", "body": body["body"]})

    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        pass


def test_comment_command_posts_for_a_fork_pr_from_workflow_run(cli: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "items.txt").write_text("one\n")
    planned = subprocess.run(
        [str(CI_SHARDS), "plan", "--items", "items.txt", "--shards", "1", "--output", "plan.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert planned.returncode == 0, planned.stderr
    # What a workflow_run event looks like for a fork: no pull_requests, another head repository.
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"workflow_run": {"pull_requests": [], "head_repository": {"full_name": "fork/r"}}}))
    _GitHub.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _GitHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        values = {
            **cli,
            "PLAN": str(tmp_path / "plan.json"),
            "SHARDS_DIR": str(tmp_path / "shards"),
            "PR": "42",
            "COMMENT_MODE": "always",
            "COMMENT_KEY": "tests/report",
            "GITHUB_TOKEN": "t0ken-value",
            "GITHUB_API_URL": f"http://127.0.0.1:{server.server_port}",
            "GITHUB_REPOSITORY": "owner/repo",
            "GITHUB_EVENT_NAME": "workflow_run",
            "GITHUB_EVENT_PATH": str(event),
        }
        done = run_step("Comment", tmp_path, values)
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
    assert done.returncode == 0, done.stderr
    assert "t0ken-value" not in done.stdout + done.stderr
    methods = [(method, path) for method, path, _auth, _body in _GitHub.requests]
    assert ("POST", "/repos/owner/repo/issues/42/comments") in methods, methods
    posted = next(body for method, _path, _auth, body in _GitHub.requests if method == "POST")
    assert posted is not None
    assert "tests/report" in posted["body"]  # the marker of the report job's comment, so re-runs update it
    assert "never-started" in posted["body"].replace("\\-", "-")
    assert all(auth == "Bearer t0ken-value" for _m, _p, auth, _b in _GitHub.requests)


def test_pytest_without_the_users_python_is_refused_up_front(tmp_path: Path) -> None:
    done = run_step("Check the command", tmp_path, {"COMMAND": "plan", "PYTEST": "true", "RUNNER_OS": "Linux"})
    assert done.returncode == 2
    assert "pytest: true needs the input python" in done.stdout
    ok = run_step("Check the command", tmp_path, {"COMMAND": "plan", "PYTEST": "true", "PYTHON": "python"})
    assert ok.returncode == 0, ok.stdout
