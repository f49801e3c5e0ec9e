"""Change-based selection against real git repositories made here: branches, renames, deletions, merge
commits, a detached HEAD, shallow clones; every fail-open rule and each map (docs/selection.md)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from ci_shards.model.outcome import CaseOutcome
from ci_shards.model.plan import Plan
from ci_shards.select.apply import select_items
from ci_shards.select.decide import Selection
from ci_shards.select.settings import SelectionSettings
from tests.e2e.gitignore import write_gitignore
from tests.unit.aggregate_fixtures import case_for, write_shard

pytestmark = [pytest.mark.e2e]

PROJECT = {
    "pyproject.toml": "[project]\nname = 'pkg'\n",
    "README.md": "# pkg\n",
    "src/pkg/__init__.py": "",
    "src/pkg/core.py": "from pkg import util\n\ndef run():\n    return util.one()\n",
    "src/pkg/util.py": "def one():\n    return 1\n",
    "src/pkg/other.py": "def two():\n    return 2\n",
    "src/pkg/loader.py": "import importlib\n\ndef load(name):\n    return importlib.import_module(name)\n",
    "src/pkg/dynamic.py": "VALUE = 3\n",
    "tests/conftest.py": "",
    "tests/test_core.py": "from pkg.core import run\n\ndef test_a():\n    assert run() == 1\n\n"
    "def test_b():\n    pass\n",
    "tests/test_other.py": "from pkg.other import two\n\ndef test_two():\n    assert two() == 2\n",
    "tests/test_loader.py": "from pkg.loader import load\n\ndef test_load():\n    assert load('pkg.' + 'dynamic')\n",
}
ITEMS = ["tests/test_core.py::test_a", "tests/test_core.py::test_b", "tests/test_other.py", "tests/test_loader.py"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True, env={**os.environ, **GIT_ENV}
    )
    return done.stdout.strip()


def write(repo: Path, files: Mapping[str, str | None]) -> None:
    for path, text in files.items():
        target = repo / path
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def commit(repo: Path, files: Mapping[str, str | None], message: str = "change") -> str:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project on ``main`` with one commit, checked out on the branch ``feature``."""
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write_gitignore(root)
    commit(root, PROJECT, "initial")
    git(root, "checkout", "-q", "-b", "feature")
    yield root


def select(repo: Path, env: Mapping[str, str] | None = None, **settings: object) -> Selection:
    return select_items(
        ITEMS,
        cwd=repo,
        rootdir=None,
        env=dict(env or {}),
        settings=SelectionSettings(**settings),  # type: ignore[arg-type]
        base=None,
    )


def selected_files(selection: Selection) -> set[str]:
    return {i.split("::")[0] for i in selection.selected}


# --------------------------------------------------------------------------------------------
# the import map over real histories


def test_a_source_change_selects_only_the_tests_that_import_it(repo: Path) -> None:
    commit(repo, {"src/pkg/other.py": "def two():\n    return 2  # changed\n"})
    selection = select(repo)
    assert not selection.run_all
    assert selected_files(selection) == {"tests/test_other.py"}
    assert set(selection.skipped) == {
        "tests/test_core.py::test_a",
        "tests/test_core.py::test_b",
        "tests/test_loader.py",
    }
    assert any(line.startswith("import map selected 1 test files: tests/test_other.py") for line in selection.lines)


def test_transitive_imports_and_a_detached_head(repo: Path) -> None:
    commit(repo, {"src/pkg/util.py": "def one():\n    return 1  # changed\n"})
    git(repo, "checkout", "-q", "--detach")
    selection = select(repo)
    assert selected_files(selection) == {"tests/test_core.py"}  # core imports util


def test_a_renamed_module_reaches_the_tests_of_both_names(repo: Path) -> None:
    commit(
        repo,
        {
            "src/pkg/other.py": None,
            "src/pkg/renamed.py": PROJECT["src/pkg/other.py"],
            "tests/test_other.py": None,
            "tests/test_renamed.py": PROJECT["tests/test_other.py"].replace("pkg.other", "pkg.renamed"),
        },
    )
    items = [*ITEMS[:2], "tests/test_renamed.py", "tests/test_loader.py"]
    selection = select_items(items, cwd=repo, rootdir=None, env={}, settings=SelectionSettings())
    assert any("renamed src/pkg/other.py → src/pkg/renamed.py" in line for line in selection.lines)
    assert selection.selected == ("tests/test_renamed.py",)  # a renamed test file is in the change


def test_a_deleted_module_selects_the_tests_that_still_import_it(repo: Path) -> None:
    commit(repo, {"src/pkg/other.py": None})
    assert selected_files(select(repo)) == {"tests/test_other.py"}


def test_a_merge_commit_diffs_from_the_merge_base(repo: Path) -> None:
    git(repo, "checkout", "-q", "main")
    commit(repo, {"src/pkg/util.py": "def one():\n    return 1  # on main\n"}, "main moves on")
    git(repo, "checkout", "-q", "feature")
    commit(repo, {"src/pkg/other.py": "def two():\n    return 2  # feature\n"})
    git(repo, "merge", "-q", "--no-edit", "main")
    assert len(git(repo, "rev-list", "--parents", "-n1", "HEAD").split()) == 3  # a real merge commit
    selection = select(repo)
    assert selected_files(selection) == {"tests/test_other.py"}  # main's own change is not this change's


def test_the_pull_request_base_from_the_event_payload(repo: Path, tmp_path: Path) -> None:
    base = git(repo, "rev-parse", "main")
    commit(repo, {"src/pkg/other.py": "def two():\n    return 2  # changed\n"})
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"base": {"sha": base}, "labels": []}}), encoding="utf-8")
    selection = select(repo, {"GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request"})
    assert selected_files(selection) == {"tests/test_other.py"}
    assert selection.lines[0] == f"base {base[:12]}"


# --------------------------------------------------------------------------------------------
# the other maps and the always-run rules


def test_touchfiles_map_links_non_python_files(repo: Path) -> None:
    commit(repo, {"web/app.js": "x = 1\n"})
    assert "no map knows which tests web/app.js affects" in select(repo).run_all  # fail open
    selection = select(repo, touchfiles={"tests/test_other.py": ("web/**",)})
    assert selected_files(selection) == {"tests/test_other.py"}
    assert any(line.startswith("touchfiles map selected 1 test files") for line in selection.lines)


def _coverage_json(repo: Path, path: str, tests: list[str], *, sha_of: str | None = None) -> str:
    sha = hashlib.sha256((sha_of if sha_of is not None else (repo / path).read_text()).encode()).hexdigest()
    data = {
        "schema": "ci-shards/coverage@1",
        "state": "complete",
        "files": {path: {"sha256": sha, "executed_lines": [1], "test_files": {t: [1] for t in tests}}},
    }
    (repo.parent / "coverage.json").write_text(json.dumps(data), encoding="utf-8")
    return str(repo.parent / "coverage.json")


def test_coverage_map_adds_what_imports_cannot_see_and_is_ignored_when_stale(repo: Path) -> None:
    coverage = _coverage_json(repo, "src/pkg/dynamic.py", ["tests/test_loader.py"])
    commit(repo, {"src/pkg/dynamic.py": "VALUE = 4\n"})
    assert selected_files(select(repo)) == set()  # no test imports it by name: the import map misses it
    selection = select(repo, coverage=coverage)
    assert selected_files(selection) == {"tests/test_loader.py"}
    assert any(line.startswith("coverage map selected 1 test files") for line in selection.lines)
    stale = _coverage_json(repo, "src/pkg/dynamic.py", ["tests/test_loader.py"], sha_of="VALUE = 0\n")
    assert selected_files(select(repo, coverage=stale)) == set()  # measured another content: not used


def test_a_missing_coverage_file_is_not_used_and_a_broken_one_runs_everything(repo: Path) -> None:
    commit(repo, {"src/pkg/other.py": "def two():\n    return 2  # changed\n"})
    selection = select(repo, coverage=str(repo.parent / "absent.json"))
    assert selected_files(selection) == {"tests/test_other.py"}
    assert any("absent.json not found, not used" in line for line in selection.lines)
    (repo.parent / "broken.json").write_text("{", encoding="utf-8")
    broken = select(repo, coverage=str(repo.parent / "broken.json"))
    assert "a map source errors" in broken.run_all and broken.selected == tuple(ITEMS)


def test_always_run_marker_config_failures_and_test_files_in_the_change(repo: Path) -> None:
    marked = PROJECT["tests/test_loader.py"].replace(
        "def test_load", "import pytest\n\n@pytest.mark.ci_shards_always\ndef test_load"
    )
    commit(repo, {"tests/test_loader.py": marked})
    commit(repo, {"src/pkg/other.py": "def two():\n    return 2  # changed\n"})
    (repo.parent / "failures.jsonl").write_text(
        json.dumps({"test_id": "tests/test_core.py::test_b", "kind": "flaky"}) + "\n", encoding="utf-8"
    )
    selection = select(repo, failures=str(repo.parent / "failures.jsonl"))
    assert set(selection.selected) == {"tests/test_other.py", "tests/test_loader.py", "tests/test_core.py::test_b"}
    assert any("test files in the change: tests/test_loader.py" in line for line in selection.lines)
    git(repo, "checkout", "-q", "-b", "second", "main")
    commit(repo, {"README.md": "# docs only\n"})
    config = select(repo, always=("tests/test_core.py::test_a",))
    assert config.selected == ("tests/test_core.py::test_a",)


# --------------------------------------------------------------------------------------------
# fail open: run everything, one line saying why


def _change(repo: Path) -> None:
    commit(repo, {"src/pkg/other.py": "def two():\n    return 2  # changed\n"})


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({"CI_SHARDS_SELECT": "off"}, "CI_SHARDS_SELECT=off"),
        ({"GITHUB_EVENT_NAME": "merge_group"}, "merge queue"),
        ({"GITHUB_EVENT_NAME": "push", "GITHUB_REF_NAME": "main"}, "the default branch (main)"),
    ],
)
def test_environment_rules_run_everything(repo: Path, env: dict[str, str], reason: str) -> None:
    _change(repo)
    selection = select(repo, env)
    assert reason in selection.run_all
    assert selection.selected == tuple(ITEMS) and not selection.skipped
    assert selection.lines == (f"run everything: {selection.run_all}",)


def test_a_label_from_the_event_payload(repo: Path, tmp_path: Path) -> None:
    _change(repo)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"labels": [{"name": "full-ci"}]}}), encoding="utf-8")
    env = {"GITHUB_EVENT_PATH": str(event)}
    assert not select(repo, env).run_all  # not the configured label
    assert "the label 'full-ci'" in select(repo, env, run_all_label="full-ci").run_all


def test_a_commit_trailer(repo: Path) -> None:
    commit(repo, {"src/pkg/other.py": "x = 1\n"}, "tweak\n\nCI-Shards: run-all")
    _change(repo)
    assert "trailer" in select(repo).run_all


def test_checked_out_default_branch_and_an_empty_diff(repo: Path) -> None:
    assert select(repo).run_all == "the diff against the base is empty"
    git(repo, "checkout", "-q", "main")
    assert "the default branch (main)" in select(repo).run_all


def test_a_global_file(repo: Path) -> None:
    commit(repo, {"tests/conftest.py": "import pytest\n"})
    assert "tests/conftest.py changed, a global file ('conftest.py')" in select(repo).run_all


def test_a_file_the_import_map_cannot_parse(repo: Path) -> None:
    commit(repo, {"src/pkg/other.py": "def two(:\n"})
    selection = select(repo)
    assert "a map source errors: src/pkg/other.py: cannot be parsed" in selection.run_all


def test_a_shallow_clone_runs_everything_with_the_hint(repo: Path, tmp_path: Path) -> None:
    _change(repo)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{repo}", str(clone))
    selection = select(clone, default_branch="main")  # the clone's origin/HEAD is feature
    assert "shallow clone" in selection.run_all and "fetch-depth: 0" in selection.run_all


def test_a_base_that_is_not_an_ancestor(repo: Path) -> None:
    _change(repo)
    git(repo, "checkout", "-q", "main")
    commit(repo, {"src/pkg/util.py": "def one():\n    return 1  # main moved\n"})
    git(repo, "checkout", "-q", "feature")
    selection = select_items(ITEMS, cwd=repo, rootdir=None, env={}, settings=SelectionSettings(), base="main")
    assert "is not an ancestor of HEAD" in selection.run_all and "git fetch --deepen" in selection.run_all
    unknown = select_items(ITEMS, cwd=repo, rootdir=None, env={}, settings=SelectionSettings(), base="nope")
    assert "'nope' is not a commit" in unknown.run_all


def test_not_a_git_repository(tmp_path: Path) -> None:
    selection = select_items(ITEMS, cwd=tmp_path, rootdir=None, env={}, settings=SelectionSettings())
    assert "not a git repository" in selection.run_all and selection.selected == tuple(ITEMS)


# --------------------------------------------------------------------------------------------
# plan --select and aggregate, through the CLI


def cli(repo: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_", "BUILDKITE", "CIRCLE"))}
    return subprocess.run(
        [sys.executable, "-m", "ci_shards", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, **GIT_ENV, **(env or {})},
        check=False,
    )


def _items_file(repo: Path) -> None:
    (repo.parent / "items.txt").write_text("\n".join(ITEMS) + "\n", encoding="utf-8")
    (repo.parent / "durations.json").write_text(json.dumps(dict.fromkeys(ITEMS, 10.0)), encoding="utf-8")


def test_plan_select_changed_plans_fewer_shards_and_aggregate_accounts_skipped_by_diff(repo: Path) -> None:
    _change(repo)
    _items_file(repo)
    plan_args = ["plan", "--items", "../items.txt", "--durations", "../durations.json", "--shards", "4"]
    proc = cli(repo, *plan_args, "--select", "changed", "-o", "../plan.json")
    assert proc.returncode == 0, proc.stderr
    assert "select (changed): import map selected 1 test files: tests/test_other.py" in proc.stderr
    plan = Plan.from_json(json.loads((repo.parent / "plan.json").read_text()))
    assert plan.items == ["tests/test_other.py"] and plan.total == 1  # 4 shards shrink with the work
    assert set(plan.skipped_by_diff) == set(ITEMS) - {"tests/test_other.py"}
    write_shard(repo.parent / "out", plan, 1, [case_for("tests/test_other.py::test_two")])
    agg = cli(repo, "aggregate", "--plan", "../plan.json", "../out", "--summary", "../summary.md")
    assert agg.returncode == 0, agg.stderr
    summary = (repo.parent / "summary.md").read_text()
    assert "3 items skipped by the diff (skipped-by-diff)" in summary
    assert "import map selected 1 test files: tests/test\\_other.py" in summary  # which map selected what
    assert "changed files (1): modified src/pkg/other.py" in summary.replace("\\", "")
    assert "3 items skipped by the diff" in agg.stderr


def test_a_change_that_selects_nothing_passes_as_skipped_by_diff(repo: Path) -> None:
    commit(repo, {"README.md": "# only docs\n"})
    _items_file(repo)
    proc = cli(repo, "plan", "--items", "../items.txt", "--shards", "2", "--select", "changed", "-o", "../plan.json")
    assert proc.returncode == 0, proc.stderr
    plan = Plan.from_json(json.loads((repo.parent / "plan.json").read_text()))
    assert plan.items == [] and len(plan.skipped_by_diff) == len(ITEMS)
    (repo.parent / "out").mkdir()
    agg = cli(repo, "aggregate", "--plan", "../plan.json", "../out", "--format", "json")
    assert agg.returncode == 0, agg.stderr  # no shard folder needed: nothing was selected for them
    verdict = json.loads(agg.stdout)
    assert {s["status"] for s in verdict["shards"]} == {"skipped-by-diff"}
    assert sorted(verdict["selection"]["skipped_by_diff"]) == sorted(ITEMS)  # counted and listed apart
    assert verdict["accounting"]["missing"] == []
    for index in range(1, plan.total + 1):  # shards that do run anyway (the workflow did not skip them)
        ran = cli(
            repo,
            "run",
            "--plan",
            "../plan.json",
            "--shard",
            f"{index}/{plan.total}",
            "--out",
            "../out",
            "--",
            "true",
            "{items}",
        )
        assert ran.returncode == 0, ran.stderr
    agg = cli(repo, "aggregate", "--plan", "../plan.json", "../out", "--format", "json")
    assert agg.returncode == 0, agg.stderr
    assert {s["status"] for s in json.loads(agg.stdout)["shards"]} == {"skipped-by-diff"}


def test_plan_select_changed_on_a_conftest_change_plans_everything(repo: Path) -> None:
    commit(repo, {"tests/conftest.py": "import os\n"})
    _items_file(repo)
    proc = cli(repo, "plan", "--items", "../items.txt", "--shards", "2", "--select", "changed", "-o", "-")
    assert proc.returncode == 0, proc.stderr
    assert "run everything: tests/conftest.py changed, a global file" in proc.stderr
    plan = json.loads(proc.stdout)
    assert "skipped_by_diff" not in plan and plan["total"] == 2


def test_shadow_mode_plans_everything_and_aggregate_names_the_misses(repo: Path) -> None:
    _change(repo)
    _items_file(repo)
    (repo / "ci-shards.yml").write_text("select: shadow\n", encoding="utf-8")  # untracked: not in the diff
    proc = cli(repo, "plan", "--items", "../items.txt", "--shards", "2", "-o", "../plan.json")
    assert proc.returncode == 0, proc.stderr
    plan = Plan.from_json(json.loads((repo.parent / "plan.json").read_text()))
    assert sorted(plan.items) == sorted(ITEMS) and not plan.skipped_by_diff
    assert set(plan.would_skip) == set(ITEMS) - {"tests/test_other.py"}
    for shard in plan.shards:
        cases = [
            case_for(
                f"{i}::test_x" if "::" not in i else i,
                CaseOutcome.FAILED if i.endswith("test_b") else CaseOutcome.PASSED,
            )
            for i in shard.items
        ]
        write_shard(repo.parent / "out", plan, shard.index, cases)
    agg = cli(repo, "aggregate", "--plan", "../plan.json", "../out", "--summary", "../summary.md")
    assert agg.returncode == 1  # test_b failed: the run fails as it always would
    summary = (repo.parent / "summary.md").read_text()
    assert "would have skipped 3 of 4 tests" in summary and "of those, 1 failed" in summary
    assert "misses" in summary and "test\\_core.py::test\\_b" in summary
    assert "MISS: tests/test_core.py::test_b failed and would have been skipped" in agg.stderr


def test_selection_flags_without_a_selection_are_a_usage_error(repo: Path) -> None:
    _items_file(repo)
    proc = cli(repo, "plan", "--items", "../items.txt", "--shards", "2", "--base", "main")
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        .splitlines()[-1]
        .endswith("--base apply only to --select changed or shadow (the selection is off)")
    )


def test_gitlab_and_buildkite_bases(repo: Path, tmp_path: Path) -> None:
    base = git(repo, "rev-parse", "main")
    _change(repo)
    gitlab = select(repo, {"CI_MERGE_REQUEST_DIFF_BASE_SHA": base, "CI_COMMIT_BRANCH": "feature"})
    assert selected_files(gitlab) == {"tests/test_other.py"}
    git(repo, "checkout", "-q", "main")  # the remote's HEAD: its default branch
    clone = tmp_path / "clone"  # a full clone: origin/main exists, as on a Buildkite agent
    git(tmp_path, "clone", "-q", "--branch", "feature", f"file://{repo}", str(clone))
    buildkite = select(clone, {"BUILDKITE_PULL_REQUEST_BASE_BRANCH": "main", "BUILDKITE_BRANCH": "feature"})
    assert selected_files(buildkite) == {"tests/test_other.py"}
    missing = select(clone, {"BUILDKITE_PULL_REQUEST_BASE_BRANCH": "release", "BUILDKITE_BRANCH": "feature"})
    assert "'origin/release' is not a commit" in missing.run_all


@pytest.mark.slow
def test_the_shards_run_only_what_the_change_selected_none_of_what_it_skipped(repo: Path) -> None:
    # the skipped files were in no shard's items, so the unowned shard, which walks every folder for new files, ran
    # them as unplanned tests ("tests that ran, not planned"): the selection saved nothing
    commit(repo, {"src/pkg/other.py": "def two():\n    return 1 + 1\n"})
    out = repo.parent / "out"
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(repo / "src")}
    env.pop("GITHUB_ACTIONS", None)
    argv = [sys.executable, "-m", "ci_shards", "local", "--discover", "--shards", "2", "--select", "changed"]
    argv += ["--base", "main", "--out", str(out), "--pytest", "--", "-p", "no:cacheprovider"]
    proc = subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=180, env=env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plan = Plan.from_json(json.loads((out / "plan.json").read_text()))
    assert sorted(plan.items) == ["tests/test_other.py"]
    skipped = {item.split("::")[0] for item in plan.skipped_by_diff}
    assert skipped == {"tests/test_core.py", "tests/test_loader.py"}, plan.skipped_by_diff
    assert "1 test, 1 passed" in proc.stdout and "ran, not planned" not in proc.stdout, proc.stdout
