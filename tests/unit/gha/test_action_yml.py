"""action.yml and the example workflows: schema-valid, injection-safe, pinned, and in step with the CLI.

Schema checks run check-jsonschema in-process with its builtin ``vendor.github-actions`` /
``vendor.github-workflows`` schemas (and the GitLab / CircleCI / Buildkite ones for docs/other-ci.md).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from check_jsonschema import main as check_jsonschema_main
from click.testing import CliRunner

from ci_shards.cli import build_parser

REPO = Path(__file__).resolve().parents[3]
ACTION = REPO / "action.yml"
WORKFLOWS = sorted((REPO / "examples" / "workflows").glob("*.yml"))
STAND_INS = sorted((REPO / "tests" / "e2e" / "gha" / "stand-ins").rglob("action.yml"))
OTHER_CI = REPO / "docs" / "other-ci.md"
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")


def schema_check(schema: str, path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(check_jsonschema_main, ["--builtin-schema", schema, str(path)])
    return result.exit_code, result.output


def load(path: Path) -> dict[Any, Any]:
    data: dict[Any, Any] = yaml.safe_load(path.read_text())
    return data


def action_steps() -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = load(ACTION)["runs"]["steps"]
    return steps


def test_the_examples_exist() -> None:
    names = {p.name for p in WORKFLOWS}
    assert {"pytest.yml", "jest.yml", "go.yml", "comment.yml"} <= names, names


@pytest.mark.parametrize("path", [ACTION, *STAND_INS], ids=lambda p: str(p.relative_to(REPO)))
def test_action_metadata_is_valid(path: Path) -> None:
    code, output = schema_check("vendor.github-actions", path)
    assert code == 0, output


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_example_workflow_is_valid(path: Path) -> None:
    code, output = schema_check("vendor.github-workflows", path)
    assert code == 0, output


def test_the_schema_check_catches_a_broken_action(tmp_path: Path) -> None:
    broken = load(ACTION)
    del broken["runs"]["steps"][1]["shell"]  # composite run steps must name their shell
    path = tmp_path / "action.yml"
    path.write_text(yaml.safe_dump(broken))
    code, output = schema_check("vendor.github-actions", path)
    assert code != 0
    assert "shell" in output


OTHER_CI_SCHEMAS = {"gitlab": "vendor.gitlab-ci", "circleci": "vendor.circle-ci", "buildkite": "vendor.buildkite"}


def other_ci_blocks() -> list[tuple[str, str]]:
    """(provider, yaml) of every ```yaml block in docs/other-ci.md that starts with '# <provider>:'."""
    blocks = re.findall(r"```yaml\n(.*?)```", OTHER_CI.read_text(), re.S)
    found = []
    for block in blocks:
        head = re.match(r"#\s*(\w+):", block)
        if head and head.group(1).lower() in OTHER_CI_SCHEMAS:
            found.append((head.group(1).lower(), block))
    return found


def test_other_ci_examples_are_valid(tmp_path: Path) -> None:
    blocks = other_ci_blocks()
    assert {provider for provider, _ in blocks} == set(OTHER_CI_SCHEMAS)
    for i, (provider, block) in enumerate(blocks):
        path = tmp_path / f"{i}-{provider}.yml"
        path.write_text(block)
        code, output = schema_check(OTHER_CI_SCHEMAS[provider], path)
        assert code == 0, f"{provider} example in docs/other-ci.md: {output}"
        assert "ci-shards run" in block and "ci-shards aggregate" in block


def test_scripts_never_interpolate_expressions() -> None:
    """Inputs reach scripts only through env: (${{ }} inside run: is script injection, gha.md §2.11)."""
    for path in [ACTION, *STAND_INS, *WORKFLOWS]:
        data = load(path)
        steps = data.get("runs", {}).get("steps", []) + [
            step for job in data.get("jobs", {}).values() for step in job.get("steps", [])
        ]
        for step in steps:
            assert "${{" not in step.get("run", ""), (
                f"{path.name}: step {step.get('name', step)} interpolates into run:"
            )


def test_github_action_path_not_the_expression() -> None:
    # github.action_path is the host path inside container jobs (actions/runner#2185); $GITHUB_ACTION_PATH is not.
    assert not re.search(r"\$\{\{[^}]*github\.action_path", ACTION.read_text())


def test_third_party_actions_are_pinned_by_sha() -> None:
    uses = [step["uses"] for step in action_steps() if "uses" in step]
    assert uses
    for ref in uses:
        assert SHA_PIN.match(ref), f"{ref} is not pinned by a full commit SHA"
    for path in WORKFLOWS:
        for job in load(path)["jobs"].values():
            for step in job.get("steps", []):
                ref = step.get("uses", "")
                if ref and not ref.startswith(("ci-shards/ci-shards@", "./")):
                    assert SHA_PIN.match(ref), f"{path.name}: {ref} is not pinned by a full commit SHA"


def test_every_step_with_a_script_names_its_shell() -> None:
    for step in action_steps():
        if "run" in step:
            assert step.get("shell") == "bash", step.get("name")


def test_shard_upload_survives_failed_tests_and_names_the_attempt() -> None:
    steps = {step.get("name"): step for step in action_steps()}
    upload = steps["Upload the shard"]
    assert upload["if"].startswith("${{ !cancelled()")
    assert upload["with"]["name"] == "${{ steps.run.outputs.artifact-name }}"  # gha.inputs.shard_artifact_name


def test_every_script_is_one_line() -> None:
    """The logic lives in Python (ci_shards.gha): a step is a `uses:` or one line with the inputs in env."""
    for step in action_steps():
        assert "uses" in step or step["run"].count("\n") == 0, step.get("name")
        if "run" in step:
            assert step["env"].get("CI_SHARDS_INPUTS") == "${{ toJSON(inputs) }}", step.get("name")


def test_timings_are_saved_on_the_default_branch_only_by_default() -> None:
    steps = {step.get("name"): step for step in action_steps()}
    condition = steps["Save the timings"]["if"]
    assert "github.event.repository.default_branch" in condition
    assert "inputs.save-timings == 'auto'" in condition
    assert "github.run_id" in steps["Save the timings"]["with"]["key"]
    restore = steps["Restore the timings"]["with"]
    assert restore["key"].startswith(restore["restore-keys"])


def test_every_input_states_its_default_and_is_used() -> None:
    """Used: by the YAML (a `uses:` step's with/if) or by the Python that reads toJSON(inputs)."""
    action = load(ACTION)
    text = ACTION.read_text()
    python = "".join(p.read_text() for p in (REPO / "src" / "ci_shards" / "gha").glob("*.py"))
    for name, spec in action["inputs"].items():
        if name != "command":
            assert "(default:" in spec["description"], f"input {name}: description must state the default"
        assert f"inputs.{name}" in text or f'"{name}"' in python, f"input {name} is declared but never used"


def test_descriptions_hold_no_expressions() -> None:
    # The runner refuses the whole action ("expressions are not allowed here") when a description has one.
    action = load(ACTION)
    for section in ("inputs", "outputs"):
        for name, spec in action[section].items():
            assert "${{" not in spec["description"], f"{section}.{name}"


def test_every_output_comes_from_a_step() -> None:
    action = load(ACTION)
    ids = {step.get("id") for step in action_steps()}
    assert {"matrix", "plan-digest", "verdict", "summary-path"} <= set(action["outputs"])
    for name, spec in action["outputs"].items():
        step = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.[\w-]+ \}\}", spec["value"])
        assert step and step.group(1) in ids, f"output {name}: {spec['value']}"


# --- action.yml and the CLI agree -----------------------------------------------------------------------------


def subcommand_options(name: str) -> set[str] | None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    chosen = sub.choices.get(name)
    return None if chosen is None else set(chosen._option_string_actions)


# The flags action.yml's steps pass are checked by parsing them: tests/unit/gha/test_inputs.py.


def test_other_ci_commands_use_known_flags() -> None:
    """Every `ci-shards <subcommand> --flag` in docs/other-ci.md exists in the CLI."""
    commands = re.findall(r"ci-shards (plan|run|aggregate|matrix) ([^\n]*)", OTHER_CI.read_text())
    assert len(commands) >= 9
    for subcommand, rest in commands:
        options = subcommand_options(subcommand)
        if options is None:
            pytest.skip(f"`ci-shards {subcommand}` is not registered in this checkout yet (its stage has not landed)")
        words = rest.split(" -- ")[0].split()
        unknown = [w for w in words if w.startswith("--") and w not in options]
        assert not unknown, f"docs/other-ci.md: `ci-shards {subcommand}` has no {unknown}"


def test_stand_ins_accept_every_input_action_yml_passes() -> None:
    """act only maps actions; if action.yml passed an input a stand-in lacks, the e2e run would not notice."""
    by_name: dict[str, set[str]] = {}
    for path in STAND_INS:
        rel = path.parent.relative_to(REPO / "tests" / "e2e" / "gha" / "stand-ins").as_posix()
        by_name[f"actions/{rel}"] = set(load(path).get("inputs", {}))
    for step in action_steps():
        if "uses" not in step:
            continue
        name = step["uses"].split("@")[0]
        assert name in by_name, f"no stand-in for {name}"
        passed = set(step.get("with", {}))
        assert passed <= by_name[name], f"{name}: stand-in lacks inputs {sorted(passed - by_name[name])}"


def test_docs_list_every_input() -> None:
    doc = (REPO / "docs" / "github-actions.md").read_text()
    for name in load(ACTION)["inputs"]:
        assert f"| `{name}` |" in doc, f"docs/github-actions.md does not document input {name}"


def test_the_minimal_workflow_in_the_docs_is_valid(tmp_path: Path) -> None:
    doc = (REPO / "docs" / "github-actions.md").read_text()
    block = re.search(r"```yaml\n(.*?)```", doc, re.S)
    assert block, "docs/github-actions.md has no workflow"
    assert len(block.group(1).splitlines()) <= 40
    path = tmp_path / "minimal.yml"
    path.write_text(block.group(1))
    code, output = schema_check("vendor.github-workflows", path)
    assert code == 0, output
    jobs = load(path)["jobs"]
    assert jobs["report"]["if"] == "${{ !cancelled() }}"
    assert jobs["test"]["strategy"]["fail-fast"] is False


RELEASE = REPO / ".github" / "workflows" / "release.yml"


def test_release_workflow_is_valid_pinned_and_publishes_through_trusted_publishing() -> None:
    code, output = schema_check("vendor.github-workflows", RELEASE)
    assert code == 0, output
    workflow = load(RELEASE)
    assert list(workflow[True]["push"]) == ["tags"]  # PyYAML reads the key `on` as True
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    build = "\n".join(step.get("run", "") for step in jobs["build"]["steps"])
    assert "python -m build" in build
    assert "twine check --strict dist/*" in build
    publish = jobs["publish"]
    assert publish["permissions"] == {"id-token": "write"}  # the only job that may mint an OIDC token
    assert publish["needs"] == "build"
    (pypi,) = [s["uses"] for s in publish["steps"] if "gh-action-pypi-publish" in s.get("uses", "")]
    assert "with" not in next(s for s in publish["steps"] if s.get("uses") == pypi)  # no password: trusted publishing
    move = jobs["move-major-tag"]
    assert move["needs"] == "publish"  # the action's tag moves only once the release is out
    assert move["permissions"] == {"contents": "write"}
    assert 'git push --force origin "refs/tags/$major"' in move["steps"][-1]["run"]
    for job in jobs.values():
        assert job.get("permissions", {}).get("id-token") != "write" or job is publish
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step
            if "run" in step:
                assert step.get("shell") == "bash", step
            if "uses" in step:
                assert SHA_PIN.match(step["uses"]), f"{step['uses']} is not pinned by a full commit SHA"


def test_other_ci_installs_what_exists_today() -> None:
    """ci-shards is not on PyPI before the first release: the docs install from a tag of this repository."""
    text = OTHER_CI.read_text()
    assert not re.search(r"pip install ci-shards\b", text)
    installs = re.findall(r'pip install "ci-shards @ git\+https://github\.com/ci-shards/ci-shards@v1"', text)
    assert len(installs) >= 7
