"""Links to each failing shard's job log, against a real HTTP server (tests/unit/github_server.py)."""

from __future__ import annotations

import pytest
import requests

from ci_shards.cli import main
from ci_shards.model.outcome import CaseOutcome
from ci_shards.report.comment import CommentClient
from ci_shards.report.github import GitHubContext
from ci_shards.report.joblinks import job_links, match_jobs
from tests.unit.aggregate_fixtures import case_for, make_plan, write_shard
from tests.unit.github_server import FakeGitHub, ServerThread

TOKEN = "ghs_SECRETtoken1234567890"
RUN = "https://github.example/o/r/actions/runs/42"


def _job(name: str, job_id: int) -> dict[str, object]:
    return {"id": job_id, "name": name, "html_url": f"https://github.example/o/r/actions/runs/42/job/{job_id}"}


@pytest.fixture
def fake():
    state = FakeGitHub(page_size=2)
    with ServerThread(state) as server:
        state.api = server.api_url  # type: ignore[attr-defined]
        yield state


def _ctx(fake, **kw) -> GitHubContext:
    values = {
        "api_url": fake.api,
        "repository": "o/r",
        "token": TOKEN,
        "run_id": "42",
        "run_attempt": "2",
        "server_url": "https://github.example",
    }
    return GitHubContext(**{**values, **kw})


def _client(fake) -> CommentClient:
    session = requests.Session()
    session.trust_env = False  # talk to 127.0.0.1 directly whatever proxy the machine has
    return CommentClient(api_url=fake.api, repository="o/r", token=TOKEN, session=session, sleep=lambda _s: None)


def test_match_jobs_by_label_not_by_a_longer_number():
    jobs = [_job("plan", 1), _job("test (11, 40, 11/40)", 2), _job("test (1, 40, 1/40)", 3), _job("aggregate", 4)]
    assert match_jobs(jobs, [1, 11, 12], 40) == {1: jobs[2]["html_url"], 11: jobs[1]["html_url"]}
    assert match_jobs([{"name": None, "html_url": 3}], [1], 1) == {}


def test_links_from_every_page_of_the_attempts_jobs(fake):
    jobs = [_job("plan", 10), *(_job(f"shard {i}/5", 10 + i) for i in range(1, 6)), _job("aggregate", 20)]
    fake.jobs[("42", "2")] = jobs
    links = job_links(_ctx(fake), [1, 5], 5, client=_client(fake))
    assert links == {1: jobs[1]["html_url"], 5: jobs[5]["html_url"]}  # shard 5 is on the third page
    paths = [path for method, path, _headers, _body in fake.log if method == "GET"]
    assert len(paths) == 4  # 7 jobs, 2 per page
    assert paths[0] == "/api/v3/repos/o/r/actions/runs/42/attempts/2/jobs?per_page=100"
    assert all(h["Authorization"] == f"Bearer {TOKEN}" for _m, _p, h, _b in fake.log)


def test_any_error_or_no_match_or_no_token_links_the_run(fake):
    fake.jobs[("42", "2")] = [_job("shard 1/2", 11)]
    # an unmatched shard links the run
    assert job_links(_ctx(fake), [1, 2], 2, client=_client(fake)) == {1: f"{RUN}/job/11", 2: RUN}
    # 403 (no actions: read permission), 404, 500 after the retry, or a body that is not a job list
    for status, body in ((403, {"message": "Resource not accessible"}), (500, {}), (200, ["not", "jobs"])):
        fake.script[:] = [(status, {}, body)] * 6
        assert job_links(_ctx(fake), [1], 2, client=_client(fake)) == {1: RUN}
    fake.script.clear()
    assert job_links(_ctx(fake, run_attempt="9"), [1], 2, client=_client(fake)) == {1: RUN}  # 404
    calls = len(fake.log)
    assert job_links(_ctx(fake, token=""), [1], 2) == {1: RUN}
    assert len(fake.log) == calls  # no token: no request
    assert job_links(_ctx(fake, run_id=""), [1], 2) == {}  # not on GitHub Actions: no link at all


def test_cli_summary_links_each_failing_shards_job(monkeypatch, tmp_path, fake):
    plan = make_plan([["tests/test_a.py::test_one"], ["tests/test_b.py::t"], ["tests/test_c.py::t"]])
    (tmp_path / "plan.json").write_text(plan.dumps())
    write_shard(tmp_path / "results", plan, 1, [case_for("tests/test_a.py::test_one", CaseOutcome.FAILED)])
    write_shard(tmp_path / "results", plan, 2)
    fake.jobs[("42", "1")] = [_job("test (1, 3, 1/3)", 11), _job("test (2, 3, 2/3)", 12), _job("test (3, 3, 3/3)", 13)]
    summary = tmp_path / "summary.md"
    env = {
        "GITHUB_API_URL": fake.api,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_RUN_ID": "42",
        "GITHUB_SERVER_URL": "https://github.example",
        "NO_PROXY": "127.0.0.1",
        "no_proxy": "127.0.0.1",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GITHUB_RUN_ATTEMPT", raising=False)
    argv = ["aggregate", "--plan", str(tmp_path / "plan.json"), str(tmp_path / "results"), "--summary", str(summary)]
    assert main(argv) == 1
    text = summary.read_text()
    assert f"Job logs of the shards that did not pass: [shard 1]({RUN}/job/11) · [shard 3]({RUN}/job/13)" in text
    assert "pytest \\\n    'tests/test_a.py::test_one'\n```" in text
