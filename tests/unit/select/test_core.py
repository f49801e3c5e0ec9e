"""The selection's pure cores: git's diff format, path globs, the import map, the maps, the decision,
the CI rules, the config, the plan fields and the shadow report."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_shards.common.errors import ConfigError
from ci_shards.model.outcome import CaseOutcome
from ci_shards.model.plan import Granularity, Plan, ShardPlan
from ci_shards.options.config import parse_config
from ci_shards.select import ci
from ci_shards.select.decide import AlwaysRun, Selection, decide, shrink_shards
from ci_shards.select.diff import ChangedFile, ChangeKind, parse_name_status
from ci_shards.select.imports import ImportMapError, build_import_map
from ci_shards.select.maps import CoverageMap, MapError, TouchfilesMap, coverage_entries
from ci_shards.select.paths import matches
from ci_shards.select.report import markdown, selection_report
from ci_shards.select.settings import SelectionSettings, SelectMode
from tests.unit.aggregate_fixtures import case_for

# --------------------------------------------------------------------------------------------
# diff


def test_name_status_with_renames_copies_and_deletions() -> None:
    out = "M\0src/a.py\0R087\0src/old.py\0src/new.py\0D\0tests/test_gone.py\0A\0tests/test_new.py\0C100\0x.py\0y.py\0"
    changes = parse_name_status(out)
    by_path = {c.path: c for c in changes}
    assert by_path["src/new.py"] == ChangedFile(ChangeKind.RENAMED, "src/new.py", old_path="src/old.py")
    assert by_path["src/new.py"].paths == ("src/old.py", "src/new.py")
    assert by_path["tests/test_gone.py"].kind is ChangeKind.DELETED
    assert by_path["y.py"].paths == ("y.py",)  # a copy leaves its source as it was
    assert [c.path for c in changes] == sorted(c.path for c in changes)


@pytest.mark.parametrize("out", ["U\0a.py\0", "R100\0only-one.py\0", "Q\0a\0"])
def test_a_diff_that_cannot_be_read_is_an_error_never_a_guess(out: str) -> None:
    with pytest.raises(ValueError, match=r"status|ends inside"):
        parse_name_status(out)


paths = st.text(alphabet="abc/._ -", min_size=1, max_size=12).filter(lambda p: "\0" not in p)


@given(st.lists(st.tuples(st.sampled_from("AMDRT"), paths, paths), max_size=8))
def test_every_entry_git_writes_is_read_back(entries: list[tuple[str, str, str]]) -> None:
    out = "".join(f"{k}100\0{a}\0{b}\0" if k == "R" else f"{k}\0{a}\0" for k, a, b in entries)
    changes = parse_name_status(out)
    assert sorted((c.path, c.old_path or "") for c in changes) == sorted(
        (b, a) if k == "R" else (a, "") for k, a, b in entries
    )


# --------------------------------------------------------------------------------------------
# path globs


@pytest.mark.parametrize(
    ("path", "pattern", "hit"),
    [
        ("conftest.py", "conftest.py", True),
        ("tests/sub/conftest.py", "conftest.py", True),
        ("poetry.lock", "*.lock", True),
        ("src/pkg/a.py", "src/**", True),
        ("src/pkg/a.py", "src/*.py", False),
        ("src/a.py", "src/*.py", True),
        ("tests/data/x/y.json", "tests/data/**", True),
        ("tests/data/x/y.json", "tests/data", True),
        (".github/workflows/ci.yml", ".github/workflows/**", True),
        ("docs/index.md", "*.py", False),
    ],
)
def test_path_globs(path: str, pattern: str, hit: bool) -> None:
    assert matches(path, pattern) is hit


# --------------------------------------------------------------------------------------------
# the import map

PROJECT = {
    "src/pkg/__init__.py": "from .core import run\n",
    "src/pkg/core.py": "import pkg.util\n",
    "src/pkg/util.py": "",
    "src/pkg/other.py": "",
    "src/pkg/dyn.py": "",
    "src/pkg/plugin.py": "",
    "tests/conftest.py": "pytest_plugins = ['pkg.plugin']\nfrom helpers import make\n",
    "tests/helpers.py": "",
    "tests/test_core.py": "from pkg.core import run\n",
    "tests/test_other.py": "import importlib\nimportlib.import_module('pkg.dyn')\nfrom pkg import other\n",
    "tests/sub/__init__.py": "",
    "tests/sub/test_rel.py": "import pytest\n\n@pytest.mark.ci_shards_always\ndef test_x():\n    pass\n",
}
TESTS = ["tests/test_core.py", "tests/test_other.py", "tests/sub/test_rel.py"]


def test_import_map_follows_imports_packages_conftests_and_plugins() -> None:
    imports = build_import_map(PROJECT, TESTS)
    core = imports.files["tests/test_core.py"]
    assert {"src/pkg/core.py", "src/pkg/util.py", "src/pkg/__init__.py"} <= core  # transitively, with packages
    assert {"tests/conftest.py", "tests/helpers.py", "src/pkg/plugin.py"} <= core  # conftest chain and its plugins
    assert "src/pkg/other.py" not in core
    assert imports.tests_for("src/pkg/util.py") >= {"tests/test_core.py"}
    assert imports.tests_for("src/pkg/dyn.py") == {"tests/test_other.py"}  # importlib.import_module("literal")
    assert imports.tests_for("README.md") is None  # not Python: this map cannot say
    assert imports.always == {"tests/sub/test_rel.py"}


def test_a_script_named_in_a_string_reaches_the_test_that_runs_it() -> None:
    sources = {**PROJECT, "scripts/gen.py": "", "tests/test_other.py": "import subprocess\nRUN = './scripts/gen.py'\n"}
    assert build_import_map(sources, TESTS).tests_for("scripts/gen.py") == {"tests/test_other.py"}


def test_a_deleted_module_still_reaches_the_tests_that_imported_it() -> None:
    sources = {k: v for k, v in PROJECT.items() if k != "src/pkg/util.py"}
    imports = build_import_map(sources, TESTS)
    assert "tests/test_core.py" in (imports.tests_for("src/pkg/util.py") or ())


def test_project_pytest_plugins_reach_every_test() -> None:
    sources = {**PROJECT, "src/pkg/entry.py": ""}
    imports = build_import_map(sources, TESTS, plugins=["pkg.entry"])
    assert imports.tests_for("src/pkg/entry.py") == set(TESTS)


def test_a_file_that_does_not_parse_is_a_map_error_naming_it() -> None:
    with pytest.raises(ImportMapError, match=r"src/pkg/util\.py"):
        build_import_map({**PROJECT, "src/pkg/util.py": "def (:\n"}, TESTS)


# --------------------------------------------------------------------------------------------
# touchfiles and coverage maps


def test_touchfiles_map_answers_only_for_its_source_globs() -> None:
    touch = TouchfilesMap(
        rules={"tests/test_api*.py": ("api/**",)}, test_files=frozenset(["tests/test_api.py", "t.py"])
    )
    assert touch.tests_for("api/schema.json") == {"tests/test_api.py"}
    assert touch.tests_for("web/x.js") is None


def _coverage(**files: str) -> dict[str, object]:
    return {
        "schema": "ci-shards/coverage@1",
        "state": "complete",
        "files": {p: {"sha256": sha, "test_files": {"tests/test_a.py": [1]}} for p, sha in files.items()},
        "unmeasured": {"pkg/unused.py": "u"},
    }


def test_coverage_map_is_used_only_while_the_base_file_is_as_measured() -> None:
    executed, unmeasured = coverage_entries(_coverage(**{"pkg/a.py": "s1", "pkg/b.py": "s2"}))
    cover = CoverageMap(
        executed_by=executed,
        unmeasured=unmeasured,
        base_sha256={"pkg/a.py": "s1", "pkg/b.py": "changed", "pkg/unused.py": "u"},
    )
    assert cover.tests_for("pkg/a.py") == {"tests/test_a.py"}
    assert cover.tests_for("pkg/b.py") is None  # stale: measured another content
    assert cover.tests_for("pkg/unused.py") == frozenset()  # tracked and never executed
    assert cover.tests_for("pkg/new.py") is None  # not at the base


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"schema": "other"}, "not a ci-shards/coverage@1"),
        ({**_coverage(), "state": "partial"}, "partial"),
        ({"schema": "ci-shards/coverage@1", "state": "complete", "files": {"a.py": {"sha256": "x"}}}, "test_files"),
    ],
)
def test_an_unusable_coverage_file_is_a_map_error(data: object, problem: str) -> None:
    with pytest.raises(MapError, match=problem):
        coverage_entries(data)


# --------------------------------------------------------------------------------------------
# the decision

ITEMS = ["tests/test_core.py::test_a", "tests/test_core.py::test_b", "tests/test_other.py", "tests/sub/test_rel.py"]
ITEM_PATHS = {i: i.split("::")[0] for i in ITEMS}


def _decide(
    changed: list[ChangedFile], settings: SelectionSettings | None = None, always: AlwaysRun | None = None
) -> Selection:
    settings = settings or SelectionSettings()
    always = always or AlwaysRun()
    imports = build_import_map(PROJECT, TESTS)
    return decide(ITEMS, item_paths=ITEM_PATHS, changed=changed, maps=[imports], settings=settings, always=always)


def test_a_source_change_selects_the_tests_that_import_it_and_names_the_rule_for_the_rest() -> None:
    everywhere = _decide([ChangedFile(ChangeKind.MODIFIED, "src/pkg/util.py")])  # pkg/__init__ imports it
    assert everywhere.selected == tuple(ITEMS)
    assert not everywhere.run_all
    selection = _decide([ChangedFile(ChangeKind.MODIFIED, "src/pkg/other.py")])
    assert selection.selected == ("tests/test_other.py",)
    assert set(selection.skipped) == {
        "tests/test_core.py::test_a",
        "tests/test_core.py::test_b",
        "tests/sub/test_rel.py",
    }
    assert all("no changed file reaches" in rule for rule in selection.skipped.values())
    assert any(line.startswith("import map selected 1 test files") for line in selection.lines)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("tests/conftest.py", "a global file"),
        ("uv.lock", "a global file"),
        ("pyproject.toml", "a global file"),
        (".github/workflows/ci.yml", "a global file"),
        ("ci-shards.yml", "a global file"),
        ("tests/data/big.json", "a global file"),
        ("web/app.js", "no map knows which tests web/app.js affects"),
    ],
)
def test_run_everything_when_unsure(path: str, reason: str) -> None:
    selection = _decide([ChangedFile(ChangeKind.MODIFIED, "src/pkg/other.py"), ChangedFile(ChangeKind.MODIFIED, path)])
    assert selection.selected == tuple(ITEMS)
    assert reason in selection.run_all
    assert not selection.skipped


def test_file_names_cannot_forge_lines_or_workflow_commands() -> None:
    evil = "web/x\n::error::forged\r.js"
    selection = _decide([ChangedFile(ChangeKind.MODIFIED, evil)])
    assert "\n" not in selection.run_all and "\r" not in selection.run_all
    assert "web/x\\x0a::error::forged\\x0d.js" in selection.run_all
    assert all("\n" not in line for line in selection.lines)


def test_an_empty_diff_runs_everything() -> None:
    assert _decide([]).run_all == "the diff against the base is empty"


def test_test_files_in_the_change_docs_and_always_run_items() -> None:
    always = AlwaysRun(
        marked_files=frozenset(["tests/sub/test_rel.py"]), failed_items=frozenset(["tests/test_other.py"])
    )
    selection = _decide(
        [
            ChangedFile(ChangeKind.RENAMED, "tests/test_core.py", old_path="tests/test_old.py"),
            ChangedFile(ChangeKind.MODIFIED, "README.md"),
        ],
        always=always,
    )
    assert set(selection.selected) == set(ITEMS)
    assert not selection.run_all  # selected one by one, not "run everything"
    assert any("test files in the change: tests/test_core.py" in line for line in selection.lines)
    assert any("ignore globs): README.md" in line for line in selection.lines)
    assert any("marked ci_shards_always" in line for line in selection.lines)
    assert any("failed or flaky in the last base run" in line for line in selection.lines)


def test_config_always_globs() -> None:
    selection = _decide(
        [ChangedFile(ChangeKind.MODIFIED, "docs/x.md")], SelectionSettings(always=("tests/test_other.py",))
    )
    assert selection.selected == ("tests/test_other.py",)


@given(st.sets(st.sampled_from([*sorted(PROJECT), "README.md", "web/x.js", "conftest.py"]), max_size=4))
def test_every_item_is_selected_or_skipped_with_a_rule_never_both(changed: set[str]) -> None:
    selection = _decide([ChangedFile(ChangeKind.MODIFIED, p) for p in changed])
    assert set(selection.selected) | set(selection.skipped) == set(ITEMS)
    assert not set(selection.selected) & set(selection.skipped)
    assert all(selection.skipped.values())


def test_shrink_shards_follows_the_selected_share_of_the_work() -> None:
    items = [f"t{i}" for i in range(10)]
    estimates = {i: 10.0 for i in items}
    assert shrink_shards(8, items, items[:2], estimates) == 2
    assert shrink_shards(8, items, items, estimates) == 8
    assert shrink_shards(8, items, [], estimates) == 1
    assert shrink_shards(8, items, items[:1], {}) == 1


# --------------------------------------------------------------------------------------------
# the CI's word


def test_ci_base_in_order() -> None:
    assert ci.ci_base({"GITHUB_BASE_REF": "main"}, {"pull_request": {"base": {"sha": "abc"}}}) == (
        "abc",
        "the pull_request event's base sha",
    )
    assert ci.ci_base({"GITHUB_BASE_REF": "main"}, {})[0] == "origin/main"  # type: ignore[index]
    assert ci.ci_base({"CI_MERGE_REQUEST_DIFF_BASE_SHA": "f00"}, {})[0] == "f00"  # type: ignore[index]
    assert ci.ci_base({"BUILDKITE_PULL_REQUEST_BASE_BRANCH": "dev"}, {})[0] == "origin/dev"  # type: ignore[index]
    assert ci.ci_base({"CIRCLE_PULL_REQUEST": "https://x/1"}, {}) is None


@pytest.mark.parametrize(
    ("env", "event", "branch", "reason"),
    [
        ({"CI_SHARDS_SELECT": "off"}, {}, "feature", "CI_SHARDS_SELECT=off"),
        ({}, {"pull_request": {"labels": [{"name": "ci-shards:run-all"}]}}, "feature", "label"),
        ({"CI_MERGE_REQUEST_LABELS": "a,ci-shards:run-all"}, {}, "feature", "label"),
        ({"GITHUB_EVENT_NAME": "merge_group"}, {}, "feature", "merge queue"),
        ({"CI_MERGE_REQUEST_EVENT_TYPE": "merge_train"}, {}, "feature", "merge train"),
        ({}, {}, "gh-readonly-queue/main/pr-1-abc", "merge queue branch"),
        ({}, {}, "main", "default branch"),
        ({}, {}, "feature", ""),
    ],
)
def test_run_all_reasons(env: dict[str, str], event: dict[str, object], branch: str, reason: str) -> None:
    got = ci.run_all_reason(env, event, SelectionSettings(), branch=branch, default_branch="main")
    assert (reason in got) if reason else got == ""


def test_default_branch_and_merge_queue_are_configurable() -> None:
    settings = SelectionSettings(select_on_default_branch=True, select_in_merge_queue=True)
    assert (
        ci.run_all_reason({"GITHUB_EVENT_NAME": "merge_group"}, {}, settings, branch="main", default_branch="main")
        == ""
    )


def test_trailer() -> None:
    assert ci.has_run_all_trailer("fix\n\nCI-Shards: run-all\n")
    assert not ci.has_run_all_trailer("mentions CI-Shards: run-all inline\n")


# --------------------------------------------------------------------------------------------
# config


def test_config_keys() -> None:
    config = parse_config(
        {
            "select": "shadow",
            "touchfiles": {"global": ["vendor/**"], "tests/test_api.py": ["api/**"]},
            "selection": {"always": ["tests/smoke/**"], "run-all-label": "full", "on-default-branch": "select"},
        },
        "ci-shards.yml",
    )
    assert config.select is SelectMode.SHADOW
    assert "vendor/**" in config.selection.global_globs and "conftest.py" in config.selection.global_globs
    assert config.selection.touchfiles == {"tests/test_api.py": ("api/**",)}
    assert config.selection.run_all_label == "full"
    assert config.selection.select_on_default_branch


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"select": "some"}, "'select' must be changed, shadow or off"),
        ({"touchfiles": ["a"]}, "'touchfiles' must map"),
        ({"touchfiles": {"t.py": 3}}, "touchfiles.t.py"),
        ({"selection": {"bogus": 1}}, "unknown key 'selection.bogus'"),
        ({"selection": {"in-merge-queue": "maybe"}}, "run-all or select"),
    ],
)
def test_bad_config_is_one_line_naming_the_key(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(data, "ci-shards.yml")


# --------------------------------------------------------------------------------------------
# plan.json and the report


def _plan(**kw: object) -> Plan:
    return Plan(
        total=1,
        granularity=Granularity.FILE,
        shards=(ShardPlan(index=1, items=("tests/test_a.py", "tests/test_b.py"), estimated_seconds=2.0),),
        lower_bound_seconds=2.0,
        unknown_items=0,
        **kw,  # type: ignore[arg-type]
    )


def test_plan_fields_keep_old_digests_and_are_covered_when_set() -> None:
    old = _plan()
    assert "skipped_by_diff" not in old.content() and "would_skip" not in old.content()
    skipped = _plan(skipped_by_diff={"tests/test_c.py": "rule"}, selection=("select: changed",))
    assert skipped.digest != old.digest
    assert Plan.from_json(json.loads(skipped.dumps())) == skipped
    edited = json.loads(skipped.dumps())
    edited["skipped_by_diff"]["tests/test_c.py"] = "another rule"
    with pytest.raises(ValueError, match="digest"):
        Plan.from_json(edited)
    both = json.loads(_plan(skipped_by_diff={"tests/test_a.py": "r"}).dumps())
    with pytest.raises(ValueError, match="both planned and in 'skipped_by_diff'"):
        Plan.from_json(both)


def test_shadow_report_counts_what_would_have_been_skipped_and_names_misses() -> None:
    plan = _plan(would_skip={"tests/test_b.py": "no changed file reaches its test file"}, selection=("select: shadow",))
    cases = [
        case_for("tests/test_a.py::test_1", time=3.0),
        case_for("tests/test_b.py::test_1", time=1.0),
        case_for("tests/test_b.py::test_2", CaseOutcome.FAILED, time=0.0),
    ]
    report = selection_report(plan, cases)
    assert report is not None
    assert report.shadow_line == "would have skipped 2 of 3 tests (25.0 % of test time); of those, 1 failed"
    assert report.misses == ("tests/test_b.py::test_2",)
    text = markdown(report)
    assert "CAUTION" in text and "tests/test\\_b.py::test\\_2" in text


def test_the_markdown_section_escapes_test_names() -> None:
    plan = _plan(skipped_by_diff={"tests/<b>@x.py": "rule"}, selection=("select: changed",))
    report = selection_report(plan, [])
    assert report is not None
    text = markdown(report)
    assert "<b>@x" not in text
    assert "1 items skipped by the diff" in text
    assert hashlib.sha256(text.encode()).hexdigest()  # renders
