"""action.yml's steps, run for real (bash + the real ci-shards CLI), without a workflow runner.

Each test takes a step's one-line `run:` and `env:` names from action.yml, gives CI_SHARDS_INPUTS the JSON the runner
would pass (toJSON(inputs)) and RUNNER_TEMP a temporary folder, and runs it. This pins down what the act e2e cannot
cheaply vary: multi-line globs, quoting in test-command, a broken quote failing loudly, and the verdict mapping
(tests/unit/gha/test_inputs.py has the input → argv mapping itself).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[3]
CI_SHARDS = Path(sys.executable).with_name("ci-shards")


def step(name: str) -> dict[str, Any]:
    steps = yaml.safe_load((REPO / "action.yml").read_text())["runs"]["steps"]
    found: dict[str, Any] = next(s for s in steps if s.get("name") == name)
    return found


def temp(cwd: Path) -> Path:
    """The RUNNER_TEMP the steps see: plan, results, shards and report live under it."""
    return cwd / "runner-temp"


def run_step(
    name: str, cwd: Path, inputs: dict[str, str], extra: dict[str, str] | None = None, *, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the step's script with bash; its env gets the inputs as JSON and the runner's variables."""
    spec = step(name)
    assert "CI_SHARDS_INPUTS" in spec.get("env", {}), f"step {name!r} does not receive the inputs"
    env = {key: "" for key in spec.get("env", {})}
    env.update(
        CI_SHARDS=str(CI_SHARDS),
        CI_SHARDS_INPUTS=json.dumps(inputs),
        PYTHON=sys.executable,
        PATH=os.environ["PATH"],
        HOME=os.environ.get("HOME", "/tmp"),
        RUNNER_TEMP=str(temp(cwd)),
        RUNNER_OS="Linux",
        GITHUB_ACTION_PATH=str(REPO),
        GITHUB_OUTPUT=str(cwd / "output.txt"),
        GITHUB_STEP_SUMMARY=str(cwd / "summary.txt"),
    )
    env.update(extra or {})
    temp(cwd).mkdir(exist_ok=True)
    (cwd / "output.txt").touch()
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", spec["run"]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def plan_into_temp(cwd: Path, shards: str) -> None:
    """A plan of items.txt where the Download-the-plan step would put it."""
    target = temp(cwd) / "ci-shards-plan" / "plan.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    planned = subprocess.run(
        [str(CI_SHARDS), "plan", "--items", "items.txt", "--shards", shards, "--output", str(target)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    assert planned.returncode == 0, planned.stderr


@pytest.fixture
def cli() -> None:
    if not CI_SHARDS.exists():
        pytest.skip(f"the ci-shards console script is not installed next to {sys.executable}")


def test_plan_takes_one_glob_per_line_and_the_shard_count(cli: None, tmp_path: Path) -> None:
    for rel in ("a/test_1.txt", "a/test_2.txt", "b/test_3.txt", "c/test_4.txt"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text("x")
    done = run_step("Plan", tmp_path, {"glob": "a/*.txt\n\nb/*.txt\n", "shards": "2", "granularity": "file"})
    assert done.returncode == 0, done.stderr
    plan = json.loads((temp(tmp_path) / "ci-shards-plan" / "plan.json").read_text())
    items = sorted(item for shard in plan["shards"] for item in shard["items"])
    assert items == ["a/test_1.txt", "a/test_2.txt", "b/test_3.txt"]
    assert plan["total"] == 2
    outputs = (tmp_path / "output.txt").read_text()
    assert "matrix<<" in outputs and "plan-digest<<" in outputs


def test_a_broken_quote_in_pytest_args_stops_the_plan_with_one_line(cli: None, tmp_path: Path) -> None:
    done = run_step("Plan", tmp_path, {"pytest": "true", "pytest-args": "tests -k 'unclosed"})
    assert done.returncode == 2
    assert "input pytest-args: No closing quotation" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (temp(tmp_path) / "ci-shards-plan" / "plan.json").exists()


def test_run_passes_test_command_words_as_given(cli: None, tmp_path: Path) -> None:
    (tmp_path / "items.txt").write_text("one\ntwo\n")
    plan_into_temp(tmp_path, "1")
    record = "import json, os, sys; open('argv.json', 'w').write(json.dumps([*sys.argv[1:], *os.environ]))"
    command = f'{sys.executable} -c "{record}" \'two words\' "$HOME" {{items}}'
    inputs = {"shard": "1/1", "test-command": command, "timeout": "1m", "retries": "0", "artifact-prefix": "p"}
    inputs["github-token"] = "t0ken-value"
    done = run_step("Run the shard", tmp_path, inputs, {"GITHUB_RUN_ATTEMPT": "3"})
    # The recorder writes no JUnit, so the shard cannot pass; the point here is the argv it was given.
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv[:4] == ["two words", "$HOME", "one", "two"], done.stderr
    assert "CI_SHARDS_INPUTS" not in argv[4:]  # the inputs (and the token in them) stay out of the tests' env
    assert (temp(tmp_path) / "ci-shards-results" / "shard-1-of-1" / "outcome.json").is_file()
    assert "artifact-name<<" in (tmp_path / "output.txt").read_text()
    assert "\np-shard-1-of-1-a3\n" in (tmp_path / "output.txt").read_text()


def test_run_without_a_command_is_a_usage_error(cli: None, tmp_path: Path) -> None:
    done = run_step("Run the shard", tmp_path, {"shard": "1/1"})
    assert done.returncode == 2
    assert "needs the input test-command" in done.stderr


@pytest.mark.parametrize(("status", "fail", "code"), [("0", "true", 0), ("1", "true", 1), ("1", "false", 0)])
def test_verdict_step_fails_only_when_asked(cli: None, tmp_path: Path, status: str, fail: str, code: int) -> None:
    verdict = {"0": "passed", "1": "failed"}[status]
    done = run_step("Verdict", tmp_path, {"fail-on-verdict": fail}, {"STATUS": status})
    assert done.returncode == code, done.stdout + done.stderr
    assert f"ci-shards verdict: {verdict}" in done.stdout


def test_an_unknown_command_is_refused(tmp_path: Path) -> None:
    done = run_step("Check the inputs", tmp_path, {"command": "deploy\n::set-output name=x::y"})
    assert done.returncode == 2
    # The echoed value cannot start a workflow command of its own on a new line.
    assert "\n::set-output" not in done.stdout
    assert "must be plan, run, aggregate or comment" in done.stdout


def test_aggregate_reports_a_missing_shard_and_fills_the_job_summary(cli: None, tmp_path: Path) -> None:
    (tmp_path / "items.txt").write_text("one\ntwo\n")
    plan_into_temp(tmp_path, "2")
    inputs = {"timings-path": ".ci-shards/timings.json", "comment": "false", "comment-mode": "always"}
    done = run_step("Aggregate", tmp_path, inputs)  # nothing arrived in ci-shards-shards
    assert done.returncode == 0, done.stderr  # the verdict is decided in the Verdict step
    outputs = (tmp_path / "output.txt").read_text()
    assert "\nfailed\n" in outputs.split("verdict<<", 1)[1] and "\n1\n" in outputs.split("status<<", 1)[1]
    report = temp(tmp_path) / "ci-shards-report"
    assert f"\n{report / 'summary.md'}\n" in outputs.split("summary-path<<", 1)[1]
    summary = (tmp_path / "summary.txt").read_text()
    assert "never-started" in summary.replace("\\-", "-")
    assert summary == (report / "summary.md").read_text()


@pytest.mark.parametrize("allow_empty", [True, False])
def test_an_empty_test_set_fails_unless_allow_empty(cli: None, tmp_path: Path, allow_empty: bool) -> None:
    """Nothing to test: the matrix still has a leg per shard (never an empty matrix) and each leg's folder says
    `empty`. With allow-empty the legs and the report pass; without it the plan step fails after writing the plan
    and its outputs, and the report fails saying no tests ran (issue 8)."""
    flag = {"allow-empty": "true" if allow_empty else "false"}
    (tmp_path / "items.txt").write_text("")  # (a glob that matches nothing is refused as a likely typo)
    done = run_step("Plan", tmp_path, {**flag, "items": "items.txt", "shards": "2"})
    assert done.returncode == (0 if allow_empty else 1), done.stderr
    if not allow_empty:
        assert "ci-shards: no tests to run: the plan has no items" in done.stderr
    outputs = (tmp_path / "output.txt").read_text()
    assert "empty<<" in outputs and "\ntrue\n" in outputs
    matrix = json.loads(outputs.split("matrix<<", 1)[1].splitlines()[1])
    assert [leg["label"] for leg in matrix["include"]] == ["1/2", "2/2"]
    shards = temp(tmp_path) / "ci-shards-shards"
    for leg in matrix["include"]:
        inputs = {**flag, "shard": leg["label"], "test-command": "false {items}", "timeout": "1m", "retries": "0"}
        ran = run_step("Run the shard", tmp_path, inputs)
        assert ran.returncode == (0 if allow_empty else 1), ran.stderr
        # what upload-artifact and download-artifact do between the jobs
        artifact = shards / f"artifact-{leg['shard']}"
        shutil.move(temp(tmp_path) / "ci-shards-results", artifact)
        shard = json.loads((artifact / f"shard-{leg['shard']}-of-2" / "outcome.json").read_text())
        assert shard["status"] == "empty"
    (tmp_path / "output.txt").write_text("")
    inputs = {**flag, "timings-path": ".ci-shards/timings.json", "comment": "false"}
    done = run_step("Aggregate", tmp_path, inputs)
    assert done.returncode == 0, done.stderr
    verdict = "passed" if allow_empty else "failed"
    assert f"\n{verdict}\n" in (tmp_path / "output.txt").read_text().split("verdict<<", 1)[1], done.stderr
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


def test_comment_command_posts_for_a_fork_pr_from_workflow_run(cli: None, tmp_path: Path) -> None:
    (tmp_path / "items.txt").write_text("one\n")
    plan_into_temp(tmp_path, "1")
    # What a workflow_run event looks like for a fork: no pull_requests, another head repository.
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"workflow_run": {"pull_requests": [], "head_repository": {"full_name": "fork/r"}}}))
    _GitHub.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _GitHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        inputs = {"pr": "42", "comment-mode": "always", "comment-key": "tests/report"}
        values = {
            "GITHUB_TOKEN": "t0ken-value",
            "GITHUB_API_URL": f"http://127.0.0.1:{server.server_port}",
            "GITHUB_REPOSITORY": "owner/repo",
            "GITHUB_EVENT_NAME": "workflow_run",
            "GITHUB_EVENT_PATH": str(event),
        }
        done = run_step("Comment", tmp_path, inputs, values)
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
    done = run_step("Check the inputs", tmp_path, {"command": "run", "pytest": "true"})
    assert done.returncode == 2
    assert "pytest: true needs the input python" in done.stdout
    ok = run_step("Check the inputs", tmp_path, {"command": "run", "pytest": "true", "python": "python"})
    assert ok.returncode == 0, ok.stdout


def test_windows_is_refused_before_anything_is_installed(tmp_path: Path) -> None:
    done = run_step("Check the inputs", tmp_path, {"command": "plan"}, {"RUNNER_OS": "Windows"})
    assert done.returncode == 2
    assert "::error title=ci-shards::Windows runners are not supported yet" in done.stdout
    assert "key=" not in (tmp_path / "output.txt").read_text()


def test_the_install_key_follows_the_sources_and_the_coverage_extra(tmp_path: Path) -> None:
    keys = []
    for coverage in ("false", "true"):
        (tmp_path / "output.txt").write_text("")
        done = run_step("Check the inputs", tmp_path, {"command": "plan", "coverage": coverage})
        assert done.returncode == 0, done.stdout + done.stderr
        outputs = dict(line.split("=", 1) for line in (tmp_path / "output.txt").read_text().splitlines())
        assert outputs["venv"] == str(temp(tmp_path) / "ci-shards-venv")
        keys.append(outputs["key"])
    assert keys[0] != keys[1]
    assert all(key.startswith("ci-shards-venv-Linux-") for key in keys)
