"""GitHub: the PR comment against a real HTTP server on 127.0.0.1, annotations, context detection."""

from __future__ import annotations

import json

import pytest
import requests

from ci_shards.cli import main
from ci_shards.common.errors import InputError
from ci_shards.model.failures import FailureKind, FailureRecord, dumps_jsonl
from ci_shards.model.outcome import CaseOutcome, ShardStatus
from ci_shards.report import comment, github
from ci_shards.report.aggregate import aggregate_dirs
from ci_shards.report.comment import CommentAction, CommentClient, CommentMode, GitHubError
from ci_shards.report.github import GitHubContext
from ci_shards.report.render import comment_marker
from tests.unit.aggregate_fixtures import case_for, flaky_case, make_plan, write_all, write_shard
from tests.unit.github_server import FakeGitHub, ServerThread

TOKEN = "ghs_SECRETtoken1234567890"
MARKER = comment_marker("CI/test")


@pytest.fixture
def fake():
    state = FakeGitHub()
    with ServerThread(state) as server:
        state.api = server.api_url  # type: ignore[attr-defined]
        yield state


def _client(fake, sleeps=None):
    session = requests.Session()
    session.trust_env = False  # talk to 127.0.0.1 directly whatever proxy the machine has
    return CommentClient(
        api_url=fake.api,
        repository="o/r",
        token=TOKEN,
        session=session,
        sleep=(sleeps.append if sleeps is not None else lambda _s: None),
        retries=3,
    )


def _body(text="results", state="failed abc", run_id="100", attempt="1"):
    return comment.with_state(f"{MARKER}\n{text}", state, run_id=run_id, run_attempt=attempt)


def test_create_when_absent_then_update_found_across_pages(fake):
    for i in range(7):
        fake.add(f"someone else {i}", login="alice")
    fake.add(f"quoting our marker is not ours:\n{MARKER}", login="mallory")
    client = _client(fake)
    first = comment.upsert_comment(client, 7, _body("one"), marker=MARKER, mode=CommentMode.ALWAYS, failed=True)
    assert first.action is CommentAction.CREATED
    assert len(fake.comments) == 9
    for i in range(4):  # push ours onto a later page
        fake.add(f"more chatter {i}", login="bob")
    second = comment.upsert_comment(client, 7, _body("two"), marker=MARKER, mode=CommentMode.ALWAYS, failed=True)
    assert second.action is CommentAction.UPDATED
    ours = [c for c in fake.comments if c["body"].startswith(MARKER)]
    assert len(ours) == 1
    assert "two" in ours[0]["body"]
    assert "quoting our marker" in fake.comments[7]["body"]  # the fake was never edited
    gets = [path for method, path, _h, _p in fake.log if method == "GET"]
    assert any("page=4" in p for p in gets)  # 13 comments, 3 per page: followed every Link rel=next
    auth = {h.get("Authorization") for _m, _p, h, _b in fake.log}
    assert auth == {f"Bearer {TOKEN}"}


@pytest.mark.parametrize(
    ("mode", "failed", "existing_state", "expected"),
    [
        (CommentMode.OFF, True, None, CommentAction.SKIPPED),
        (CommentMode.ON_FAILURE, False, None, CommentAction.SKIPPED),
        (CommentMode.ON_FAILURE, True, None, CommentAction.CREATED),
        (CommentMode.ON_FAILURE, False, "failed abc", CommentAction.UPDATED),  # an old failure is not left behind
        (CommentMode.ON_CHANGE, True, "failed abc", CommentAction.UNCHANGED),
        (CommentMode.ON_CHANGE, False, "failed abc", CommentAction.UPDATED),
        (CommentMode.ON_CHANGE, True, None, CommentAction.CREATED),
        (CommentMode.ALWAYS, False, "passed x", CommentAction.UPDATED),
    ],
)
def test_modes(fake, mode, failed, existing_state, expected):
    if existing_state is not None:
        fake.add(_body("old", existing_state))
    state = "failed abc" if failed else "passed def"
    result = comment.upsert_comment(_client(fake), 7, _body("new", state), marker=MARKER, mode=mode, failed=failed)
    assert result.action is expected
    if mode is CommentMode.OFF:
        assert fake.log == []
    writes = [m for m, _p, _h, _b in fake.log if m in ("POST", "PATCH")]
    assert bool(writes) == (expected in (CommentAction.CREATED, CommentAction.UPDATED))


def test_retries_on_500_and_429_with_retry_after(fake):
    fake.script = [
        (500, {}, {"message": "boom"}),
        (429, {"Retry-After": "7"}, {"message": "slow down"}),
        (502, {}, {"message": "bad gateway"}),
    ]
    sleeps: list[float] = []
    result = comment.upsert_comment(
        _client(fake, sleeps), 7, _body(), marker=MARKER, mode=CommentMode.ALWAYS, failed=True
    )
    assert result.action is CommentAction.CREATED
    assert sleeps == [1.0, 7.0, 4.0]  # exponential backoff, but Retry-After wins


def test_secondary_rate_limit_403_is_retried(fake):
    fake.script = [
        (403, {}, {"message": "You have exceeded a secondary rate limit. Please wait a few minutes."}),
        (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "0"}, {"message": "API rate limit exceeded"}),
    ]
    sleeps: list[float] = []
    result = comment.upsert_comment(
        _client(fake, sleeps), 7, _body(), marker=MARKER, mode=CommentMode.ALWAYS, failed=True
    )
    assert result.action is CommentAction.CREATED
    assert len(sleeps) == 2


def test_read_only_token_falls_back_with_one_notice(fake):
    fake.script = [(403, {}, {"message": "Resource not accessible by integration"})]
    result = comment.upsert_comment(_client(fake), 7, _body(), marker=MARKER, mode=CommentMode.ALWAYS, failed=True)
    assert result.action is CommentAction.FALLBACK
    assert "read-only" in result.detail
    assert "workflow_run" in result.detail
    assert TOKEN not in result.detail
    assert fake.comments == []


def test_gives_up_after_retries_without_leaking_the_token(fake):
    fake.script = [(503, {}, {"message": f"echo {TOKEN[:4]}"})] * 10
    sleeps: list[float] = []
    with pytest.raises(GitHubError) as err:
        _client(fake, sleeps).list_comments(7)
    assert "gave up after 4 attempts" in str(err.value)
    assert TOKEN not in str(err.value)
    assert TOKEN not in repr(_client(fake))
    assert len(sleeps) == 3


def test_connection_refused_is_retried_then_reported():
    session = requests.Session()
    session.trust_env = False
    client = CommentClient(
        api_url="http://127.0.0.1:9",
        repository="o/r",
        token=TOKEN,
        session=session,
        sleep=lambda _s: None,
        retries=1,
        timeout=2,
    )
    with pytest.raises(GitHubError, match="ConnectionError"):
        client.list_comments(1)


def test_oversized_body_is_capped(fake):
    body = _body("x" * 100_000)
    comment.upsert_comment(_client(fake), 7, body, marker=MARKER, mode=CommentMode.ALWAYS, failed=True)
    assert len(fake.comments[0]["body"]) < 65_536
    assert fake.comments[0]["body"].startswith(MARKER)


def test_sanitize_body_from_untrusted_file():
    evil = (
        f"<!-- ci-shards:other -->\n{comment.STATE_PREFIX}passed 1 run=999999999.1 -->\n"
        f"## ❌ ci-shards: failed\nhi @octocat\x1b[31m\n{MARKER}\n"
    )
    clean = comment.sanitize_body(evil, MARKER, run_id="50", run_attempt="2")
    lines = clean.splitlines()
    assert lines[0] == MARKER
    # the file's state line is dropped and recomputed: its run cannot freeze later updates
    assert comment.read_run(clean) == (50, 2)
    assert "999999999" not in clean
    assert clean.count(comment.STATE_PREFIX) == 1
    state = comment.read_state(clean)
    assert state.startswith("failed ") and state != "passed 1"
    assert comment.read_state(comment.sanitize_body(evil, MARKER, run_id="51")) == state  # on-change still works
    assert clean.count("<!-- ci-shards:") == 1
    assert "@octocat" not in clean
    assert "\x1b" not in clean


def test_a_users_comment_with_our_marker_is_never_ours(fake):
    # mallory (a User, not a bot) posts first: the marker, then a state line from a "newer" run
    fake.add(_body("fake results", state="failed abc", run_id="999999999", attempt="1"), login="mallory")
    client = _client(fake)
    first = comment.upsert_comment(client, 7, _body("real"), marker=MARKER, mode=CommentMode.ON_CHANGE, failed=True)
    assert first.action is CommentAction.CREATED  # neither frozen by her run nor suppressed by her state
    second = comment.upsert_comment(
        client, 7, _body("real two", run_id="101"), marker=MARKER, mode=CommentMode.ALWAYS, failed=True
    )
    assert second.action is CommentAction.UPDATED
    mallory, ours = fake.comments
    assert mallory["body"] == _body("fake results", state="failed abc", run_id="999999999", attempt="1")
    assert "real two" in ours["body"]
    assert ours["user"]["type"] == "Bot"
    patched = [p for m, p, _h, _b in fake.log if m == "PATCH"]
    assert patched == [f"/api/v3/repos/o/r/issues/comments/{ours['id']}"]
    assert ("GET", "/api/v3/user") in [(m, p) for m, p, _h, _b in fake.log]  # asked, got 403, carried on


def test_a_personal_tokens_own_comment_is_found_by_login(fake):
    fake.token_user = "ci-person"
    fake.add(_body("impostor", run_id="999999999"), login="mallory")
    client = _client(fake)
    assert (
        comment.upsert_comment(client, 7, _body("one"), marker=MARKER, mode=CommentMode.ALWAYS, failed=True).action
        is CommentAction.CREATED
    )
    again = comment.upsert_comment(client, 7, _body("two"), marker=MARKER, mode=CommentMode.ALWAYS, failed=True)
    assert again.action is CommentAction.UPDATED
    assert [c["user"]["login"] for c in fake.comments] == ["mallory", "ci-person"]
    assert "two" in fake.comments[1]["body"]
    assert "impostor" in fake.comments[0]["body"]


# --------------------------------------------------------------------------------------------
# the CLI end to end (GITHUB_API_URL honoured, token never printed)


def _github_env(monkeypatch, tmp_path, fake, event):
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event))
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    for key, value in {
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": fake.api,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_WORKFLOW": "CI",
        "GITHUB_JOB": "test",
        "NO_PROXY": "127.0.0.1",
        "no_proxy": "127.0.0.1",
    }.items():
        monkeypatch.setenv(key, value)
    return summary


def _pr_event(head_repo="o/r"):
    return {"pull_request": {"number": 7, "head": {"repo": {"full_name": head_repo}}}}


def _failing_run(tmp_path):
    plan = make_plan([["tests/test_a.py::test_one", "tests/test_a.py::test_two"], ["tests/test_b.py::t"]])
    (tmp_path / "plan.json").write_text(plan.dumps())
    results = tmp_path / "results"
    write_shard(
        results,
        plan,
        1,
        [case_for("tests/test_a.py::test_one", CaseOutcome.FAILED), flaky_case("tests/test_a.py::test_two")],
    )
    write_shard(results, plan, 2)
    return plan, results


def test_cli_aggregate_github_comment_summary_annotations(monkeypatch, tmp_path, fake, capsys):
    summary = _github_env(monkeypatch, tmp_path, fake, _pr_event())
    _plan, results = _failing_run(tmp_path)
    code = main(
        [
            "aggregate",
            "--plan",
            str(tmp_path / "plan.json"),
            str(results),
            "--github",
            "--comment",
            "--junit",
            str(tmp_path / "merged.xml"),
            "--failures",
            str(tmp_path / "all.jsonl"),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""  # stdout carries only the product (none without --format json)
    assert TOKEN not in out + err
    assert "::error file=tests/test_a.py,title=tests/test_a.py%3A%3Atest_one (shard 1)::" in err
    assert "::warning " in err  # the flaky test
    assert "PR comment created" in err
    text = summary.read_text()
    assert text.startswith("earlier step\n")  # appended, not overwritten
    assert "ci-shards: failed" in text
    (comment,) = fake.comments
    assert comment["body"].startswith("<!-- ci-shards:CI/test -->\n<!-- ci-shards-state:failed ")
    assert all(p.startswith("/api/v3/") for _m, p, _h, _b in fake.log)
    # a second run updates the same comment
    assert main(["aggregate", "--plan", str(tmp_path / "plan.json"), str(results), "--comment"]) == 1
    assert len(fake.comments) == 1
    assert [m for m, *_ in fake.log].count("PATCH") == 1


def test_cli_fork_pr_falls_back_to_summary_with_one_notice(monkeypatch, tmp_path, fake, capsys):
    summary = _github_env(monkeypatch, tmp_path, fake, _pr_event(head_repo="fork/r"))
    _plan, results = _failing_run(tmp_path)
    code = main(["aggregate", "--plan", str(tmp_path / "plan.json"), str(results), "--github", "--comment"])
    err = capsys.readouterr().err
    assert code == 1
    assert fake.log == []
    assert err.count("fork PR") == 1
    assert "::notice::" in err
    assert "ci-shards: failed" in summary.read_text()


def test_cli_comment_from_body_file_for_workflow_run(monkeypatch, tmp_path, fake, capsys):
    _github_env(monkeypatch, tmp_path, fake, {"workflow_run": {"id": 1}})
    monkeypatch.setenv("GITHUB_EVENT_NAME", "workflow_run")
    _plan, results = _failing_run(tmp_path)
    body = tmp_path / "comment.md"
    assert (
        main(
            [
                "aggregate",
                "--plan",
                str(tmp_path / "plan.json"),
                str(results),
                "--comment-out",
                str(body),
                "--comment-key",
                "CI/test",
                "--no-annotations",
            ]
        )
        == 1
    )
    assert main(["comment", "--body-file", str(body), "--pr", "7", "--key", "CI/test", "--mode", "on-change"]) == 0
    assert main(["comment", "--body-file", str(body), "--pr", "7", "--key", "CI/test", "--mode", "on-change"]) == 0
    err = capsys.readouterr().err
    assert "PR comment created" in err
    assert "PR comment unchanged" in err
    assert len(fake.comments) == 1


def test_cli_bad_event_payload_costs_only_the_comment(monkeypatch, tmp_path, fake, capsys):
    summary = _github_env(monkeypatch, tmp_path, fake, _pr_event())
    (tmp_path / "event.json").write_text("{not json")
    _plan, results = _failing_run(tmp_path)
    out = tmp_path / "out"
    code = main(
        [
            "aggregate",
            "--plan",
            str(tmp_path / "plan.json"),
            str(results),
            "--github",
            "--comment",
            "--junit",
            str(out / "merged.xml"),
            "--failures",
            str(out / "all.jsonl"),
            "--timings-out",
            str(out / "timings.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1  # the verdict, not exit 2 for the payload
    assert "ci-shards: failed" in summary.read_text()
    assert 'name="test_one"' in (out / "merged.xml").read_text()
    assert "test_one" in (out / "all.jsonl").read_text()
    assert (out / "timings.json").is_file()
    assert "::error file=tests/test_a.py," in err  # annotations still emitted
    warnings = [line for line in err.splitlines() if line.startswith("::warning::") and "event.json" in line]
    assert len(warnings) == 1
    assert "cannot read the GitHub event payload" in warnings[0]
    assert fake.log == []  # no PR number, no comment


def test_cli_comment_needs_one_source(capsys):
    assert main(["comment"]) == 2
    assert "either --plan" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# annotations and context


def test_annotations_capped_escaped_and_noticed(tmp_path):
    items = [f"tests/test_a.py::test_{i}" for i in range(15)]
    plan = make_plan([items, ["tests/test_z.py::gone"]])
    evil = "bad: value, 100% ::error::injected\nsecond line"
    write_shard(tmp_path, plan, 1, [case_for(i, CaseOutcome.FAILED, message=evil) for i in items])
    lines = github.annotation_lines(aggregate_dirs(plan, [tmp_path]))
    errors = [line for line in lines if line.startswith("::error ")]
    notices = [line for line in lines if line.startswith("::notice ")]
    assert len(errors) == 10
    assert len(notices) == 1
    assert "7 more errors are not annotated" in notices[0]  # 15 failed, the shard, 1 never ran; 10 shown
    one_more = github.annotation_lines(aggregate_dirs(plan, [tmp_path]), per_type=16)
    assert "1 more error is not annotated" in one_more[-1]
    assert all("\n" not in line for line in lines)
    # the message is data after "::": percent-escaped, one physical line, cannot start a command
    assert any(
        line.endswith(
            "::bad: value, 100%25 ::error::injected%0A%0ATraceback (most recent call last):%0A  ...%0AAssertionError"
        )
        for line in errors
    )
    # missing items and the never-started shard come first: they hide the most
    assert "shard 2" in errors[0] or "never ran" in errors[0]


def test_annotation_properties_escaped():
    line = github._annotation("error", "m", title="a,b:c\nd", file="dir/a,b:c.py", line=3)
    assert line == "::error file=dir/a%2Cb%3Ac.py,line=3,title=a%2Cb%3Ac d::m"


def test_context_from_env():
    env = {
        "GITHUB_API_URL": "https://ghe.example/api/v3/",
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_WORKFLOW": "CI",
        "GITHUB_JOB": "agg",
        "GITHUB_RUN_ID": "42",
    }
    ctx = GitHubContext.from_env(env, _pr_event("fork/r"))
    assert ctx.api_url == "https://ghe.example/api/v3"
    assert ctx.pr_number == 7
    assert ctx.is_fork_pr
    assert ctx.comment_key == "CI/agg"
    assert ctx.run_url == "https://github.com/o/r/actions/runs/42"
    assert TOKEN not in repr(ctx)
    assert not GitHubContext.from_env({**env, "GITHUB_EVENT_NAME": "push"}, {}).is_fork_pr
    assert GitHubContext.from_env(env, {"issue": {"number": 3, "pull_request": {}}}).pr_number == 3


def test_load_event(tmp_path):
    assert github.load_event(None) == {}
    assert github.load_event(tmp_path / "none.json") == {}
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(InputError, match=r"bad\.json"):
        github.load_event(bad)


def test_clean_run_has_no_annotations(tmp_path):
    plan = make_plan([["tests/test_a.py::t"]])
    write_all(tmp_path, plan)
    assert github.annotation_lines(aggregate_dirs(plan, [tmp_path])) == []


def test_an_older_run_never_overwrites_a_newer_runs_comment(fake):
    fake.add(_body("from run 200", run_id="200", attempt="1"))
    client = _client(fake)
    late = comment.upsert_comment(
        client, 7, _body("from run 100", run_id="100", attempt="3"), marker=MARKER, mode=CommentMode.ALWAYS, failed=True
    )
    assert late.action is CommentAction.UNCHANGED
    assert "newer run (200, attempt 1)" in late.detail
    assert "from run 200" in fake.comments[0]["body"]
    retry = comment.upsert_comment(
        client,
        7,
        _body("run 200 again", run_id="200", attempt="2"),
        marker=MARKER,
        mode=CommentMode.ALWAYS,
        failed=True,
    )
    assert retry.action is CommentAction.UPDATED
    assert "run 200 again" in fake.comments[0]["body"]
    assert comment.read_run(fake.comments[0]["body"]) == (200, 2)
    assert comment.read_state(fake.comments[0]["body"]) == "failed abc"


def test_racing_creates_leave_one_comment_oldest_wins(fake):
    fake.add("unrelated", login="alice")
    fake.race = _body("the other job's", run_id="100", attempt="1")
    result = comment.upsert_comment(
        _client(fake), 7, _body("ours", run_id="101"), marker=MARKER, mode=CommentMode.ALWAYS, failed=True
    )
    assert result.action is CommentAction.UPDATED
    ours = [c for c in fake.comments if c["body"].startswith(MARKER)]
    assert len(ours) == 1
    assert "ours" in ours[0]["body"]
    assert ours[0]["id"] == min(c["id"] for c in fake.comments if c["user"]["login"] != "alice")
    assert [m for m, *_ in fake.log].count("DELETE") == 1


def test_cli_fork_fallback_writes_the_job_summary_when_none_was_asked_for(monkeypatch, tmp_path, fake, capsys):
    summary = _github_env(monkeypatch, tmp_path, fake, _pr_event(head_repo="fork/r"))
    _plan, results = _failing_run(tmp_path)
    assert main(["aggregate", "--plan", str(tmp_path / "plan.json"), str(results), "--comment"]) == 1
    assert "ci-shards: failed" in summary.read_text()
    own = tmp_path / "own-summary.md"
    summary.write_text("")
    assert (
        main(["aggregate", "--plan", str(tmp_path / "plan.json"), str(results), "--comment", "--summary", str(own)])
        == 1
    )
    assert summary.read_text() == ""  # the caller publishes its own file (the action does): no duplicate
    assert "ci-shards: failed" in own.read_text()
    assert fake.log == []


@pytest.mark.parametrize(
    ("file", "workspace", "expected"),
    [
        ("tests/a.py", "", "tests/a.py"),
        ("./tests/a.py", "/w", "tests/a.py"),
        ("/home/runner/work/r/r/tests/a.py", "/home/runner/work/r/r", "tests/a.py"),
        ("/usr/lib/python3/x.py", "/home/runner/work/r/r", None),
        ("/abs/x.py", "", None),
        ("tests\\win\\a.py", "", "tests/win/a.py"),
        (None, "/w", None),
    ],
)
def test_annotation_paths_are_repo_relative(file, workspace, expected):
    assert github.repo_relative(file, workspace) == expected


def test_shard_level_annotation_says_its_reason_once(tmp_path):
    # a shard whose tests passed but which failed as a whole: the shard-level line is its only annotation
    plan = make_plan([["tests/test_a.py::test_x"]])
    folder = write_shard(tmp_path, plan, 1, [case_for("tests/test_a.py::test_x")], status=ShardStatus.TIMED_OUT)
    problem = "timed out after 1s, between tests"
    record = FailureRecord(
        shard=1, test_id="ci-shards::shard-1-of-1", kind=FailureKind.SHARD, message=f"failed: {problem}", text=problem
    )
    with (folder / "failures.jsonl").open("a") as jsonl:
        jsonl.write(dumps_jsonl([record]))
    lines = github.annotation_lines(aggregate_dirs(plan, [tmp_path]))
    [shard_line] = [line for line in lines if "title=ci-shards" in line]
    reason = shard_line.split("::", 2)[2]
    assert reason.count(problem) == 1


def test_cli_comment_with_plan_needs_a_dir(tmp_path, capsys):
    plan = make_plan([["tests/test_a.py::t"]])
    (tmp_path / "plan.json").write_text(plan.dumps())
    assert main(["comment", "--plan", str(tmp_path / "plan.json")]) == 2
    assert "--plan needs at least one DIR" in capsys.readouterr().err


def test_cli_comment_on_a_fork_pr_does_not_point_at_a_job_summary(monkeypatch, tmp_path, fake, capsys):
    summary = _github_env(monkeypatch, tmp_path, fake, _pr_event(head_repo="fork/r"))
    _plan, results = _failing_run(tmp_path)
    assert main(["comment", "--plan", str(tmp_path / "plan.json"), str(results)]) == 0
    err = capsys.readouterr().err
    assert fake.log == []
    assert "job summary only" not in err
    assert "no PR comment was written (the comment command writes no job summary)" in err
    assert summary.read_text() == "earlier step\n"  # the comment command writes no summary


def test_cli_comment_read_only_token_does_not_point_at_a_job_summary(monkeypatch, tmp_path, fake, capsys):
    _github_env(monkeypatch, tmp_path, fake, _pr_event())
    _plan, results = _failing_run(tmp_path)
    fake.script = [(403, {}, {"message": "Resource not accessible by integration"})] * 3
    assert main(["comment", "--plan", str(tmp_path / "plan.json"), str(results)]) == 0
    err = capsys.readouterr().err
    assert "job summary only" not in err
    assert "no PR comment was written (the comment command writes no job summary)" in err
