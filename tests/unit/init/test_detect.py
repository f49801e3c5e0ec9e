"""The pure core of ci-shards init: project facts in, choices (each with its reason) out."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ci_shards.common.errors import UsageError
from ci_shards.init.detect import Ci, InitRequest, Runner, command_line, decide, glob_for
from ci_shards.init.facts import ProjectFacts
from ci_shards.init.render import render, yaml_scalar


def facts(**kw: Any) -> ProjectFacts:
    return ProjectFacts(**kw)


def finding(setup_facts: ProjectFacts, subject: str, request: InitRequest | None = None) -> tuple[str, str]:
    found = next(f for f in decide(setup_facts, request or InitRequest()).findings if f.subject == subject)
    return found.value, found.why


def test_pytest_settings_win_over_package_json() -> None:
    both = facts(pytest_source="tox.ini", package_json={"devDependencies": {"jest": "1"}})
    assert decide(both, InitRequest()).runner is Runner.PYTEST
    assert decide(facts(package_json={"devDependencies": {"jest": "1"}}), InitRequest()).runner is Runner.JEST
    node = facts(package_json={"scripts": {"test": "node --test test/"}})
    assert decide(node, InitRequest()).runner is Runner.NODE
    assert decide(facts(has_go_mod=True, files=frozenset({"go.mod"})), InitRequest()).runner is Runner.GO
    assert decide(facts(files=frozenset({"requirements.txt"})), InitRequest()).runner is Runner.PYTEST
    assert decide(facts(), InitRequest(runner=Runner.GO)).runner is Runner.GO


def test_a_folder_of_test_files_alone_is_pytest_named_by_its_first_file() -> None:
    found = finding(facts(pytest_test_file="tests/test_a.py"), "runner")
    assert found == ("pytest", "pytest's test files (tests/test_a.py)")
    # any project file speaks first: a package.json with jest is jest even beside a test_*.py
    jest = facts(pytest_test_file="test_a.py", package_json={"devDependencies": {"jest": "1"}})
    assert decide(jest, InitRequest()).runner is Runner.JEST


@pytest.mark.parametrize(
    ("given_facts", "install"),
    [
        (facts(pyproject={"project": {"name": "p", "optional-dependencies": {"dev": [], "tests": []}}}),
         ("python -m pip install -e '.[tests]'",)),
        (facts(files=frozenset({"setup.cfg"}), setup_cfg_extras=("test",)), ("python -m pip install -e '.[test]'",)),
        (facts(pyproject={"project": {"name": "p"}, "dependency-groups": {"test": []}}),
         ("python -m pip install 'pip>=25.1'", "python -m pip install -e . --group test")),
        (facts(pyproject={"dependency-groups": {"dev": []}}),
         ("python -m pip install 'pip>=25.1'", "python -m pip install --group dev")),
        (facts(pyproject={"tool": {"poetry": {"name": "p", "group": {"docs": {}, "test": {}}}}}),
         ("python -m pip install poetry", "poetry config virtualenvs.create false", "poetry install --with test")),
        (facts(pyproject={"tool": {"poetry": {"name": "p", "dev-dependencies": {"pytest": "*"}}}}),
         ("python -m pip install poetry", "poetry config virtualenvs.create false", "poetry install")),
        (facts(pyproject={"tool": {"poetry": {"name": "p", "group": {"docs": {}}}},
                          "build-system": {"build-backend": "poetry.core.masonry.api"}}),
         ("python -m pip install -e . pytest",)),
        (facts(files=frozenset({"requirements.txt", "requirements-dev.txt", "requirements-docs.txt"})),
         ("python -m pip install -r requirements.txt -r requirements-dev.txt",)),
        (facts(files=frozenset({"requirements.txt"})), ("python -m pip install -r requirements.txt",)),
        (facts(pytest_source="pytest.ini"), ("python -m pip install pytest",)),
        # the plugins the settings need, as pytest stops without them ("unrecognized arguments: --nomigrations")
        (facts(pytest_source="pyproject.toml", pytest_keys=("DJANGO_SETTINGS_MODULE", "norecursedirs"),
               addopts=("--nomigrations", "--cov=pkg", "--cov-report", "html", "-nauto", "--dist", "loadfile")),
         ("python -m pip install pytest pytest-cov pytest-django pytest-xdist",)),
        (facts(pytest_source="pytest.ini", pytest_keys=("asyncio_mode", "timeout"), addopts=("-p", "no:cacheprovider")),
         ("python -m pip install pytest pytest-asyncio pytest-timeout",)),
        # an extra is the project's own list: taken as it is
        (facts(files=frozenset({"setup.cfg"}), setup_cfg_extras=("test",), pytest_keys=("DJANGO_SETTINGS_MODULE",)),
         ("python -m pip install -e '.[test]'",)),
    ],
)  # fmt: skip
def test_the_install_command(given_facts: ProjectFacts, install: tuple[str, ...]) -> None:
    request = InitRequest(runner=Runner.PYTEST)
    assert decide(given_facts, request).install == install
    assert decide(given_facts, InitRequest(runner=Runner.PYTEST, install="make deps")).install == ("make deps",)


def test_the_python_version() -> None:
    spec = facts(pyproject={"project": {"requires-python": ">=3.9,<3.12"}}, pytest_source="pyproject.toml")
    assert finding(spec, "python")[0] == "3.11"
    pinned = facts(python_version_file="3.10.4", pyproject={"project": {"requires-python": ">=3.9"}})
    assert finding(pinned, "python", InitRequest(runner=Runner.PYTEST)) == ("3.10", ".python-version says 3.10.4")
    assert finding(pinned, "python", InitRequest(runner=Runner.PYTEST, python_version="3.13"))[0] == "3.13"
    unread = facts(pyproject={"project": {"requires-python": "weird"}}, pytest_source="pyproject.toml")
    assert finding(unread, "python")[0] == "3.12"
    poetry = facts(pyproject={"tool": {"poetry": {"dependencies": {"python": "~3.11"}}}}, pytest_source="pytest.ini")
    assert finding(poetry, "python") == ("3.11", "the newest that Poetry's python = ~3.11, that is >=3.11,<3.12 allows")


@pytest.mark.parametrize(
    ("path", "glob"),
    [
        ("src/a/b.test.ts", "src/**/*.test.ts"),
        ("sum.spec.js", "*.spec.js"),
        ("lib/__tests__/x.js", "lib/**/__tests__/**/*.js"),
        ("test/test-parse.mjs", "test/**/test-*.mjs"),
        ("pkg/parse_test.js", "pkg/**/*_test.js"),
    ],
)
def test_a_glob_per_folder_and_kind(path: str, glob: str) -> None:
    assert glob_for(path) == glob


PY = Runner.PYTEST


@pytest.mark.parametrize(
    ("request_", "says"),
    [
        (InitRequest(runner=PY, ci=Ci.GITLAB, shards="auto"), "fixed count"),
        (InitRequest(runner=PY, ci=Ci.GITLAB, comment_workflow=True), "workflow_run"),
        (InitRequest(runner=Runner.JEST, ci=Ci.GITLAB), "pytest pipelines only"),
        (InitRequest(runner=Runner.GO, coverage=True), "not go test"),
        (InitRequest(runner=PY, shards="many"), "--shards"),
        (InitRequest(runner=PY, target_seconds=60), "--target-seconds 60: it sizes --shards auto"),
        (InitRequest(runner=PY, shards="auto", target_seconds=0), "at least 1"),
        (InitRequest(), "cannot tell the test runner"),
    ],
)
def test_requests_that_cannot_be_met(request_: InitRequest, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        decide(facts(), request_)


def test_the_command_line_names_only_what_differs_from_the_defaults() -> None:
    assert command_line(InitRequest()) == "ci-shards init"
    request = InitRequest(ci=Ci.GITLAB, shards="3", coverage=True, select_changed=True, install="pip install 'x'")
    assert (
        command_line(request)
        == "ci-shards init --ci gitlab --shards 3 --coverage --select changed --install 'pip install '\\''x'\\'''"
    )


@given(st.text(max_size=40))
def test_a_scalar_reads_back_as_the_string(value: str) -> None:
    assert yaml.safe_load(f"key: {yaml_scalar(value)}\n") == {"key": value}


def test_an_expression_or_a_line_break_from_the_project_is_refused() -> None:
    for bad in ("tests/${{ github.token }}", "tests\nrun: evil"):
        with pytest.raises(UsageError, match="GitHub expression or a second line"):
            render(decide(facts(pytest_source="pytest.ini", testpaths=(bad,)), InitRequest()))


def test_findings_in_the_header_stay_comments() -> None:
    sneaky = facts(pyproject={"project": {"requires-python": ">=3.10\nname: x"}}, pytest_source="pyproject.toml")
    (workflow,) = render(decide(sneaky, InitRequest()))
    assert yaml.safe_load(workflow.text)["name"] == "tests"


def test_a_folder_below_the_repository_root_is_told_so() -> None:
    inside = facts(pytest_source="pytest.ini", repository_root="/src/mono")
    (note,) = decide(inside, InitRequest()).notes
    assert note.startswith("this folder is inside the repository at /src/mono")
    assert decide(facts(pytest_source="pytest.ini"), InitRequest()).notes == ()


@pytest.mark.parametrize(
    ("addopts", "says"),
    [
        (("-x",), ["stop pytest after failures (-x)"]),
        (("-ra", "-xvs"), ["stop pytest after failures (-xvs)"]),
        (("--maxfail", "3"), ["stop pytest after failures (--maxfail=3)"]),
        (("--cov=pkg", "--cov-fail-under=99"), ["gate coverage at 99% (--cov-fail-under)"]),
        (("--exitfirst", "--cov-fail-under", "90.5"), ["(--exitfirst)", "gate coverage at 90.5%"]),
        (("-x", "--maxfail=0", "--cov-fail-under=0"), []),  # the last value wins, as in pytest
        (("-rx", "-p", "xdist", "-k", "x"), []),  # x as -r's, -p's and -k's value: no -x
    ],
)
def test_addopts_that_break_per_shard_runs_are_to_do_notes_with_the_words_that_undo_them(
    addopts: tuple[str, ...], says: list[str]
) -> None:
    project = facts(pytest_source="pytest.ini", addopts=addopts)
    notes = decide(project, InitRequest()).notes
    assert len(notes) == len(says) and all(part in note for part, note in zip(says, notes, strict=True))
    assert all(note.startswith("addopts in pytest.ini ") and " to pytest-args " in note for note in notes)
    on_gitlab = decide(project, InitRequest(ci=Ci.GITLAB)).notes
    assert all(" to the test job's pytest words (after `--`) " in note for note in on_gitlab)


def test_the_install_finding_names_each_plugin_and_the_setting_that_needs_it() -> None:
    project = facts(pytest_source="tox.ini", pytest_keys=("DJANGO_SETTINGS_MODULE",), addopts=("-n", "4", "--ds=x"))
    value, why = finding(project, "install")
    assert value == "python -m pip install pytest pytest-django pytest-xdist"
    needs = "DJANGO_SETTINGS_MODULE → pytest-django, -n → pytest-xdist"
    assert why.endswith(f"pytest and the plugins its settings need ({needs}), add yours")


def test_workers_from_the_flag_or_the_projects_n_go_to_the_plan_and_run_steps() -> None:
    flagged = decide(facts(pytest_source="pytest.ini"), InitRequest(workers="auto"))
    assert flagged.workers == "auto" and flagged.install == ("python -m pip install pytest pytest-xdist",)
    (workflow,) = render(flagged)
    jobs = yaml.safe_load(workflow.text)["jobs"]
    steps = [s for job in ("plan", "test") for s in jobs[job]["steps"] if s.get("with", {}).get("workers")]
    assert [(s["with"]["command"], s["with"]["workers"]) for s in steps] == [("plan", "auto"), ("run", "auto")]
    assert "ci-shards init --workers auto" in workflow.text
    # a project whose addopts already run pytest-xdist is planned for its -n
    own = decide(facts(pytest_source="tox.ini", addopts=("-n", "3")), InitRequest())
    assert (own.workers, finding(facts(pytest_source="tox.ini", addopts=("-n3",)), "workers")) == (
        "3",
        ("3", "-n 3 in addopts in tox.ini: planned for them"),
    )
    (pipeline,) = render(decide(facts(pytest_source="tox.ini"), InitRequest(ci=Ci.GITLAB, workers="2")))
    assert "ci-shards plan --shards 4 --workers 2 --pytest" in pipeline.text
    assert "ci-shards run --plan plan.json --shard auto --timeout 20m --pytest --workers 2" in pipeline.text
    # an install init did not choose may lack pytest-xdist: a to-do says so
    extra = facts(files=frozenset({"setup.cfg"}), setup_cfg_extras=("test",), pytest_source="setup.cfg")
    (note,) = decide(extra, InitRequest(workers="2")).notes
    assert note == "the shards run pytest-xdist (2 workers): have pytest-xdist in your test dependencies"
    assert decide(facts(pytest_source="pytest.ini"), InitRequest()).workers == ""


@pytest.mark.parametrize(
    ("request_", "says"),
    [
        (InitRequest(workers="0"), "--workers '0': expected auto or a whole number of workers ≥ 1"),
        (InitRequest(workers="2", runner=Runner.GO), "--workers runs each shard's pytest under pytest-xdist; go"),
    ],
)
def test_workers_that_cannot_be_met_are_refused(request_: InitRequest, says: str) -> None:
    with pytest.raises(UsageError, match=re.escape(says)):
        decide(facts(pytest_source="pytest.ini", has_go_mod=True), request_)


@pytest.mark.parametrize(
    ("addopts", "noted"),
    [
        (("--cov=pkg",), True),
        (("-ra", "--cov"), True),
        (("--cov=pkg", "--cov-fail-under=0"), False),  # pytest-cov's option, even 0, overrides coverage.py's setting
        (("--cov=pkg", "--no-cov"), False),
        (("-ra",), False),  # pytest-cov not on: nothing applies the gate
    ],
)
def test_coverage_pys_own_gate_is_a_to_do_note_when_addopts_turn_pytest_cov_on(
    addopts: tuple[str, ...], noted: bool
) -> None:
    project = facts(pytest_source="pytest.ini", addopts=addopts, coverage_gate=(".coveragerc", "50"))
    notes = decide(project, InitRequest()).notes
    expected = (
        ".coveragerc gates coverage at 50% (fail_under), which pytest-cov applies with --cov in addopts in"
        " pytest.ini: each shard covers only its own tests' code and would fail it; add --cov-fail-under=0 to"
        " pytest-args and gate the merged coverage (docs/coverage.md)"
    )
    assert notes == ((expected,) if noted else ())
    assert (
        decide(
            facts(pytest_source="pytest.ini", addopts=addopts, coverage_gate=(".coveragerc", "0")), InitRequest()
        ).notes
        == ()
    )
