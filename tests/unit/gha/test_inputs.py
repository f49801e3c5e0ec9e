"""The action's inputs → ci-shards argv (ci_shards.gha): every input to its flag(s), the defaults, hostile text,
artifact names, the refusals and the verdict. What used to be reachable only through a workflow run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path, PurePath
from typing import Any

import pytest
import yaml

from ci_shards.cli import build_parser, main
from ci_shards.common.errors import UsageError
from ci_shards.gha.bootstrap import (
    install_key,
    interpreter_digest,
    refusal,
    sources_digest,
    tool_folder,
    venv_folder,
    wrapper_script,
)
from ci_shards.gha.inputs import (
    Folders,
    Verdict,
    aggregate_argv,
    comment_argv,
    parse_inputs,
    plan_argv,
    run_argv,
    shard_artifact_name,
    step_exit,
    verdict_of,
)

REPO = Path(__file__).resolve().parents[3]
FOLDERS = Folders(PurePath("/rt"))
PLAN = "/rt/ci-shards-plan/plan.json"


def defaults() -> dict[str, str]:
    """What toJSON(inputs) holds when the workflow sets nothing: action.yml's own defaults."""
    spec: dict[str, Any] = yaml.safe_load((REPO / "action.yml").read_text())["inputs"]
    return {name: str(field.get("default", "")) for name, field in spec.items()}


def parses(argv: list[str]) -> argparse.Namespace:
    """The CLI accepts the argv (every flag exists and every value has its type)."""
    return build_parser().parse_args(argv)


# --- plan -----------------------------------------------------------------------------------------------------


def test_plan_with_the_defaults_passes_only_what_it_must() -> None:
    argv = plan_argv(defaults(), FOLDERS, timings_exist=False)
    assert argv == ["matrix", "--plan-out", PLAN]
    parses(argv)


@pytest.mark.parametrize(
    ("given", "flags"),
    [
        ({"shards": "4"}, ["--shards", "4"]),
        ({"shards": "auto", "target-seconds": "300"}, ["--shards", "auto", "--target-seconds", "300"]),
        ({"granularity": "file"}, ["--granularity", "file"]),
        ({"variant": "py3.12"}, ["--variant", "py3.12"]),
        ({"allow-empty": "true"}, ["--allow-empty"]),
        ({"select": "changed"}, ["--select", "changed"]),
        ({"durations": ".test_durations"}, ["--durations", ".test_durations"]),
        ({"glob": "a/*.py\n\n  b/**/*.ts  \n"}, ["--glob", "a/*.py", "--glob", "b/**/*.ts"]),
        ({"items": "one.txt\ntwo.txt"}, ["--items", "one.txt", "--items", "two.txt"]),
        ({"pytest": "true"}, ["--discover"]),
        ({"pytest": "true", "discover": "false"}, ["--pytest"]),
        ({"pytest": "true", "pytest-args": "tests -p no:randomly"}, ["--discover", "--", "tests", "-p", "no:randomly"]),
        ({"pytest-args": "tests"}, []),  # pytest-args without pytest: true is not a plan
    ],
)
def test_plan_maps_each_input_to_its_flags(given: dict[str, str], flags: list[str]) -> None:
    argv = plan_argv({**defaults(), **given}, FOLDERS, timings_exist=False)
    assert argv == ["matrix", "--plan-out", PLAN, *flags]
    parses(argv)


def test_plan_reads_the_restored_timings_only_when_the_cache_brought_them() -> None:
    inputs = {**defaults(), "timings-path": "ci/t.json"}
    assert "--cached-durations" not in plan_argv(inputs, FOLDERS, timings_exist=False)
    argv = plan_argv(inputs, FOLDERS, timings_exist=True)
    assert argv[argv.index("--cached-durations") + 1] == "ci/t.json"


# --- run ------------------------------------------------------------------------------------------------------


def test_run_with_the_defaults_needs_a_test_command() -> None:
    with pytest.raises(UsageError, match="needs the input test-command"):
        run_argv(defaults(), FOLDERS)


def test_run_with_a_test_command_and_the_defaults() -> None:
    argv = run_argv({**defaults(), "test-command": "npx jest {items}"}, FOLDERS)
    head = ["run", "--plan", PLAN, "--shard", "auto", "--out", "/rt/ci-shards-results", "--timeout", "30m"]
    assert argv == [*head, "--retries", "0", "--", "npx", "jest", "{items}"]
    parses(argv)


@pytest.mark.parametrize(
    ("given", "flags"),
    [
        ({"shard": "2/4"}, ["--shard", "2/4"]),
        ({"timeout": "5m"}, ["--timeout", "5m"]),
        ({"retries": "2"}, ["--retries", "2"]),
        ({"junit": "reports/*.xml"}, ["--junit", "reports/*.xml"]),
        ({"allow-empty": "true"}, ["--allow-empty"]),
        ({"coverage": "true"}, ["--coverage"]),
    ],
)
def test_run_maps_each_input_to_its_flags(given: dict[str, str], flags: list[str]) -> None:
    argv = run_argv({**defaults(), "test-command": "go test", **given}, FOLDERS)
    own = argv[: argv.index("--")]
    for i in range(0, len(flags), 2):
        assert flags[i] in own
        if i + 1 < len(flags) and not flags[i + 1].startswith("--"):
            assert own[own.index(flags[i]) + 1] == flags[i + 1]
    parses(argv)


def test_run_with_pytest_keeps_the_options_after_dashes_and_ignores_test_command() -> None:
    argv = run_argv({**defaults(), "pytest": "true", "pytest-args": "-x -k 'a or b'", "test-command": "x"}, FOLDERS)
    assert argv[argv.index("--pytest") :] == ["--pytest", "--", "-x", "-k", "a or b"]
    assert run_argv({**defaults(), "pytest": "true"}, FOLDERS)[-1] == "--pytest"


@pytest.mark.parametrize(
    "hostile",
    ["$(touch /tmp/pwned)", "`id`", "a; rm -rf /", "x && y", "$HOME", "--shard 9/9", "::set-output name=x::y"],
)
def test_hostile_text_stays_one_inert_word_after_the_dashes(hostile: str) -> None:
    command = f"echo '{hostile}' {{items}}"
    argv = run_argv({**defaults(), "test-command": command}, FOLDERS)
    dashes = argv.index("--")
    assert argv[dashes:] == ["--", "echo", hostile, "{items}"]
    assert parses(argv).shard == "auto"  # a flag inside the command never reaches ci-shards' own options


@pytest.mark.parametrize(("name", "value"), [("pytest-args", "-k 'unclosed"), ("test-command", 'say "hi')])
def test_an_unbalanced_quote_is_a_usage_error_naming_the_input(name: str, value: str) -> None:
    inputs = {**defaults(), "pytest": "true" if name == "pytest-args" else "false", name: value}
    with pytest.raises(UsageError, match=f"input {name}: No closing quotation"):
        run_argv(inputs, FOLDERS)


def test_the_gha_step_exits_2_with_one_line_on_a_broken_quote(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = {**defaults(), "command": "plan", "pytest": "true", "pytest-args": "tests -k 'x"}
    monkeypatch.setenv("CI_SHARDS_INPUTS", json.dumps(inputs))
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path))
    assert main(["gha", "plan"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "ci-shards: input pytest-args: No closing quotation (quote it as you would in a shell)"
    ]


# --- aggregate / comment --------------------------------------------------------------------------------------


def test_aggregate_with_the_defaults() -> None:
    argv = aggregate_argv(defaults(), FOLDERS)
    report = "/rt/ci-shards-report"
    assert argv == [
        "aggregate", "--plan", PLAN, "--junit-out", f"{report}/junit.xml", "--failures", f"{report}/failures.jsonl",
        "--summary", f"{report}/summary.md", "--comment-out", f"{report}/comment.md",
        "--timings-out", ".ci-shards/timings.json", "--variant", "", "--comment", "--comment-mode", "always",
        "/rt/ci-shards-shards",
    ]  # fmt: skip
    parses(argv)


@pytest.mark.parametrize(
    ("given", "present", "absent"),
    [
        ({"comment": "false"}, [], ["--comment", "--comment-mode"]),
        ({"comment-mode": "on-failure"}, ["--comment-mode", "on-failure"], []),
        ({"allow-empty": "true"}, ["--allow-empty"], []),
        ({"fail-on": "new"}, ["--fail-on", "new"], []),
        ({"record-history": "true"}, ["--record-history"], []),
        ({"coverage": "true"}, ["--coverage-out", "/rt/ci-shards-report/coverage"], []),
        ({"variant": "py3.11"}, ["--variant", "py3.11"], []),
        ({"timings-path": "t/s.json"}, ["--timings-out", "t/s.json"], []),
    ],
)
def test_aggregate_maps_each_input_to_its_flags(given: dict[str, str], present: list[str], absent: list[str]) -> None:
    argv = aggregate_argv({**defaults(), **given}, FOLDERS)
    assert " ".join(present) in " ".join(argv)
    assert not set(absent) & set(argv)
    assert argv[-1] == "/rt/ci-shards-shards"
    parses(argv)


def test_comment_maps_pr_key_and_mode() -> None:
    assert comment_argv(defaults(), FOLDERS) == [
        "comment", "--plan", PLAN, "--comment-mode", "always", "/rt/ci-shards-shards",
    ]  # fmt: skip
    argv = comment_argv({**defaults(), "pr": "42", "comment-key": "ci/report", "comment-mode": "on-change"}, FOLDERS)
    assert argv[3:-1] == ["--comment-mode", "on-change", "--pr", "42", "--comment-key", "ci/report"]
    parses(argv)


# --- names, refusals, verdict ---------------------------------------------------------------------------------


def test_the_shard_artifact_carries_the_prefix_the_shard_and_the_attempt() -> None:
    assert shard_artifact_name("ci-shards", ["shard-2-of-4"], "3") == "ci-shards-shard-2-of-4-a3"
    assert shard_artifact_name("api", ["logs", "shard-1-of-1"], "") == "api-shard-1-of-1-a1"
    assert shard_artifact_name("ci-shards", ["logs"], "1") is None  # never started: aggregate says so


@pytest.mark.parametrize(
    ("inputs", "runner_os", "says"),
    [
        ({"command": "deploy"}, "Linux", "input 'command' must be plan, run, aggregate or comment (got: 'deploy')"),
        ({"command": "plan\n::stop-commands::x"}, "Linux", "(got: 'plan ::stop-commands::x')"),
        ({"command": "run", "pytest": "true"}, "Linux", "pytest: true needs the input python"),
        ({"command": "plan", "pytest": "true", "discover": "false"}, "Linux", "pytest: true needs the input python"),
        ({"command": "plan"}, "Windows", "Windows runners are not supported yet; run the shards on ubuntu or macos"),
    ],
)
def test_refusals(inputs: dict[str, str], runner_os: str, says: str) -> None:
    problem = refusal(inputs, runner_os)
    assert problem is not None and says in problem
    assert "\n" not in problem


@pytest.mark.parametrize(
    "inputs",
    [
        {"command": "plan", "pytest": "true"},  # discovering needs no project Python
        {"command": "run", "pytest": "true", "python": "python"},
        {"command": "aggregate"},
        {"command": "comment"},
    ],
)
def test_what_can_work_is_not_refused(inputs: dict[str, str]) -> None:
    assert refusal(inputs, "macOS") is None


@pytest.mark.parametrize(
    ("status", "verdict"), [(0, Verdict.PASSED), (1, Verdict.FAILED), (2, Verdict.ERROR), (3, Verdict.ERROR)]
)
def test_verdict_of_the_exit_code(status: int, verdict: Verdict) -> None:
    assert verdict_of(status) is verdict


def test_fail_on_verdict_false_turns_any_status_into_a_passing_step() -> None:
    assert [step_exit(s, fail_on_verdict=True) for s in (0, 1, 2)] == [0, 1, 2]
    assert [step_exit(s, fail_on_verdict=False) for s in (0, 1, 2)] == [0, 0, 0]


def test_inputs_json_booleans_read_as_yaml_wrote_them() -> None:
    assert parse_inputs('{"pytest": true, "retries": 2, "pr": null}') == {"pytest": "true", "retries": "2", "pr": ""}
    with pytest.raises(UsageError, match="CI_SHARDS_INPUTS is not JSON"):
        parse_inputs("{pytest")
    with pytest.raises(UsageError, match="JSON object"):
        parse_inputs("[1]")


def test_the_install_key_changes_with_what_the_venv_depends_on(tmp_path: Path) -> None:
    env = {"RUNNER_TEMP": "/rt", "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64"}
    interpreter = interpreter_digest(python="/py", python_version="3.12.1", coverage=False)
    assert interpreter != interpreter_digest(python="/py", python_version="3.12.1", coverage=True)
    assert interpreter != interpreter_digest(python="/py", python_version="3.13.0", coverage=False)
    assert interpreter != interpreter_digest(python="/other/py", python_version="3.12.1", coverage=False)
    key = install_key(env, venv="/v", interpreter=interpreter, sources="s")
    assert key.startswith("ci-shards-venv-Linux-X64-") and key.endswith("-s")
    assert key != install_key(env, venv="/v", interpreter="other", sources="s")
    assert key != install_key(env, venv="/elsewhere", interpreter=interpreter, sources="s")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    (tmp_path / "src" / "pkg" / "a.py").write_text("x = 1\n")
    before = sources_digest(tmp_path)
    (tmp_path / "src" / "pkg" / "notes.txt").write_text("not a source")
    assert sources_digest(tmp_path) == before
    (tmp_path / "src" / "pkg" / "a.py").write_text("x = 2\n")
    assert sources_digest(tmp_path) != before
    before = sources_digest(tmp_path)
    (tmp_path / "templates" / "report").mkdir(parents=True)  # installed as ci_shards.templates
    (tmp_path / "templates" / "report" / "verdict.md.j2").write_text("{{ x }}\n")
    assert sources_digest(tmp_path) != before


def test_the_wrapper_quotes_the_interpreter_path() -> None:
    assert (
        wrapper_script("/opt/it's here/python") == "#!/bin/sh\nexec '/opt/it'\\''s here/python' -m ci_shards \"$@\"\n"
    )


# --- the edge, in-process -------------------------------------------------------------------------------------


def test_gha_aggregate_outputs_the_verdict_and_fills_the_job_summary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "items.txt").write_text("one\n")
    plan = tmp_path / "rt" / "ci-shards-plan" / "plan.json"
    assert main(["plan", "--items", "items.txt", "--shards", "1", "--output", str(plan)]) == 0
    output, summary = tmp_path / "output.txt", tmp_path / "summary.txt"
    for name, value in {
        "CI_SHARDS_INPUTS": json.dumps({**defaults(), "comment": "false"}),
        "RUNNER_TEMP": str(tmp_path / "rt"),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
    }.items():
        monkeypatch.setenv(name, value)
    assert main(["gha", "aggregate"]) == 0  # the Verdict step fails the job, after the uploads
    text = output.read_text()
    assert "\nfailed\n" in text.split("verdict<<", 1)[1] and "\n1\n" in text.split("status<<", 1)[1]
    assert "never-started" in summary.read_text().replace("\\-", "-")
    monkeypatch.setenv("STATUS", "1")
    assert main(["gha", "verdict"]) == 1
    monkeypatch.setenv("CI_SHARDS_INPUTS", json.dumps({**defaults(), "fail-on-verdict": "false"}))
    assert main(["gha", "verdict"]) == 0
    monkeypatch.setenv("STATUS", "")  # the aggregate step never finished: not a pass
    monkeypatch.setenv("CI_SHARDS_INPUTS", json.dumps(defaults()))
    assert main(["gha", "verdict"]) == 3


def test_gha_steps_refuse_to_run_outside_a_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUNNER_TEMP", raising=False)
    monkeypatch.setenv("CI_SHARDS_INPUTS", "{}")
    assert main(["gha", "plan"]) == 2


def test_the_tool_folder_is_one_per_sources_digest_and_the_venv_one_per_interpreter() -> None:
    env = {"RUNNER_TEMP": "/rt", "RUNNER_TOOL_CACHE": "/tools"}
    assert tool_folder(env, "s1") == Path("/tools/ci-shards/s1") != tool_folder(env, "s2")
    assert venv_folder(env, "s1", "i1") == Path("/tools/ci-shards/s1/venv-i1") != venv_folder(env, "s1", "i2")
    # no tool cache: the venv of the job's own temporary folder, as before
    assert tool_folder({"RUNNER_TEMP": "/rt"}, "s1") is None
    assert venv_folder({"RUNNER_TEMP": "/rt"}, "s1", "i1") == Path("/rt/ci-shards-venv")
