"""Issue 8's "Also" list through ``cli.main``: each misuse is exit 2 with one line, never a traceback or a fallback."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from ci_shards.cli import main
from ci_shards.common.errors import UsageError
from ci_shards.plan.choose import choose_shards
from ci_shards.plan.pytest_args import check_no_cache_selection, check_pytest_words
from ci_shards.run.process import path_not_command


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def items(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    path = tmp_path / "items.txt"
    path.write_text("".join(f"f{i}.py::t\n" for i in range(300)))
    return path


@pytest.mark.parametrize("first", ["pytest", "py.test", "python", "python3", "python3.12", ".venv/bin/python"])
def test_a_runner_word_after_pytest_dash_dash_is_misuse(first: str) -> None:
    with pytest.raises(UsageError, match=f"--pytest runs pytest itself.*{first!r} is misuse"):
        check_pytest_words([first, "tests/"])
    check_pytest_words(["tests/", "-x"])  # options and paths are what belongs there
    check_pytest_words([])


def test_a_suite_folder_named_pytest_is_a_path(tmp_path: Path) -> None:
    (tmp_path / "pytest").mkdir()
    check_pytest_words(["pytest", "-x"], tmp_path)
    with pytest.raises(UsageError):
        check_pytest_words(["python", "-m", "pytest"], tmp_path)


def _one_shard_plan(folder: Path) -> None:
    plan = {
        "schema": "ci-shards/plan@1",
        "total": 1,
        "granularity": "test",
        "shards": [{"index": 1, "items": ["f0.py::t"]}],
    }
    (folder / "plan.json").write_text(json.dumps(plan))


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--plan", "plan.json", "--shard", "1/1", "--pytest", "--", "pytest", "tests/"],
        ["local", "--items", "items.txt", "--shards", "2", "--pytest", "--", "python", "-m", "pytest"],
        ["plan", "--pytest", "--shards", "2", "--", "pytest", "tests"],
    ],
)
def test_pytest_misuse_is_exit_2_everywhere(capsys, items: Path, argv: list[str]) -> None:
    _one_shard_plan(items.parent)
    code, _, err = run(capsys, *argv)
    assert code == 2, err
    assert "--pytest runs pytest itself" in err and "Traceback" not in err


def test_matrix_over_githubs_limit_is_exit_2_naming_it(capsys, items: Path) -> None:
    code, out, err = run(capsys, "matrix", "--items", "items.txt", "--shards", "300", "--plan-out", "p.json")
    assert (code, out) == (2, "")
    assert "--shards 300: more shards than any CI fans out (GitHub's matrix runs at most 256 jobs" in err
    assert not (items.parent / "p.json").exists()


@pytest.mark.parametrize("command", ["plan", "matrix", "local"])
@pytest.mark.parametrize("count", ["257", "99999999999999999999999"])
def test_a_shard_count_beyond_any_ci_is_exit_2_before_any_plan(capsys, items: Path, command: str, count: str) -> None:
    # issue 27: `plan --shards 99999999999999999999999` ran 45 s and reached 8.8 GB with no message
    command_words = ["--", "true"] if command == "local" else []  # local's shards run a command
    code, out, err = run(capsys, command, "--items", "items.txt", "--shards", count, *command_words)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"ci-shards: --shards {count}: more shards than any CI fans out (GitHub's matrix runs at most 256 jobs,"
        " GitLab's parallel: 200); use at most 256"
    ]


def test_matrix_caps_more_shards_than_items_with_one_line(capsys, items: Path) -> None:
    items.write_text("a.py::t\nb.py::t\nc.py::t\n")
    code, out, err = run(capsys, "matrix", "--items", "items.txt", "--shards", "200", "--plan-out", "p.json")
    assert code == 0
    assert [m["label"] for m in json.loads(out)["include"]] == ["1/3", "2/3", "3/3"]
    assert "ci-shards: --shards 200 capped to 3 shards: one per item" in err.splitlines()
    assert json.loads((items.parent / "p.json").read_text())["total"] == 3


def test_plan_keeps_the_count_a_fixed_ci_needs_and_says_which_shards_are_empty(capsys, items: Path) -> None:
    # GitLab's `parallel: 4` runs 4 jobs whatever the plan holds: the plan has exactly 4, the empty ones pass
    items.write_text("a.py::t\nb.py::t\n")
    code, _out, err = run(capsys, "plan", "--items", "items.txt", "--shards", "4", "--format", "json", "-o", "p.json")
    assert code == 0
    assert json.loads((items.parent / "p.json").read_text())["total"] == 4
    assert "2 of 4 shards are empty (shards 3-4)" in err and "capped" not in err


def test_shards_auto_over_githubs_limit_is_exit_2(capsys, items: Path) -> None:
    argv = ["plan", "--items", "items.txt", "--shards", "auto", "--target-seconds", "1", "--max-shards", "400"]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "--shards auto: 300 shards exceed GitHub's matrix limit of 256" in err


def test_shards_auto_never_asks_for_more_shards_than_help() -> None:
    items = [f"f{i}.py::t" for i in range(40)]
    durations = {i: 10.0 for i in items} | {"f0.py::t": 300.0}  # one item bounds every plan at 300 s
    choice = choose_shards(items, durations, target_seconds=100, max_shards=256)
    assert choice.plan.total == 3  # 300 s, not 256 shards of one item each
    assert "would shorten it by under 2%" in choice.reason
    few = choose_shards(items[1:6], durations, target_seconds=1, max_shards=256)
    assert few.plan.total == 5  # never more shards than items


@pytest.mark.parametrize("weight", ["tests/*=1e308", "tests/*=inf", "tests/*=nan", "tests/*=0", "tests/*=-1"])
def test_weights_are_validated(capsys, items: Path, weight: str) -> None:
    code, _, err = run(capsys, "plan", "--items", "items.txt", "--shards", "2", "--weight", weight)
    assert code == 2, err
    assert f"--weight {weight!r}: expected PATTERN=FACTOR with a factor above 0 and at most 1e+06" in err


def test_config_weights_are_validated(capsys, items: Path) -> None:
    (items.parent / "ci-shards.yml").write_text("weights:\n  'f*': 1.0e+308\n")
    code, _, err = run(capsys, "plan", "--items", "items.txt", "--shards", "2")
    assert code == 2
    assert "'weights.f*' must be above 0 and at most 1e+06" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--debug", "junit", "summary", "missing.xml"],
        ["junit", "summary", "--debug", "missing.xml"],
        ["junit", "summary", "missing.xml", "--debug"],
        ["plan", "--items", "missing.txt", "--shards", "2", "--debug"],
    ],
)
def test_debug_works_anywhere_before_dash_dash(capsys, items: Path, argv: list[str]) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "Traceback" in err and "unrecognized arguments" not in err


def test_debug_after_dash_dash_belongs_to_the_command(capsys, items: Path) -> None:
    code, _, err = run(capsys, "run", "--plan", "missing.json", "--shard", "1/1", "--", "mytool", "--debug")
    assert code == 2
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv", [["run", "--plan", "p.json", "--shard", "1/1", "--retr", "2", "--", "true"], ["plan", "--shard", "2"]]
)
def test_abbreviated_options_are_refused(capsys, items: Path, argv: list[str]) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "unrecognized arguments: --" in err


def test_local_starts_no_more_shards_than_items(capsys, items: Path) -> None:
    # issue 27: `local --shards 200` on the 44-item demo started 200 processes (52 s against 8 s)
    items.write_text("a.py::t\nb.py::t\n")
    writer = "import sys; open(sys.argv[1], 'w').write('<testsuite><testcase classname=\"a\" name=\"t\"/></testsuite>')"
    argv = ["local", "--items", "items.txt", "--shards", "200", "--jobs", "1", "--allow-empty"]
    code, _out, err = run(capsys, *argv, "--", sys.executable, "-c", writer, "{junit}")
    assert "ci-shards: --shards 200 capped to 2 shards: one per item" in err.splitlines()
    assert sorted(p.name for p in (items.parent / "ci-shards-results").glob("shard-*")) == [
        "shard-1-of-2",
        "shard-2-of-2",
    ]
    assert code in (0, 1)


@pytest.mark.parametrize(
    "word", ["--co", "--collect-only", "--setup-plan", "--setup-only", "--fixtures", "--markers", "--cache-show=x*"]
)
def test_an_option_after_which_pytest_runs_no_test_is_refused(word: str) -> None:
    # --setup-plan: every shard's pytest reported each test passed, none having run, and the verdict was green
    with pytest.raises(UsageError, match=re.escape(repr(word)) + " makes pytest .* and run no test, so every shard"):
        check_pytest_words(["tests/", "-q", word])
    check_pytest_words(["-k", "--co", "-m", "--markers"])  # an option's value is no option
    check_pytest_words(["tests/", "--cache-clear", "--setup-show", "--collect-in-virtualenv"])


@pytest.mark.parametrize(
    "argv",
    [
        ["local", "--items", "items.txt", "--shards", "2", "--pytest", "--", "--setup-plan"],
        ["run", "--plan", "plan.json", "--shard", "1/1", "--pytest", "--", "--co"],
        ["plan", "--pytest", "--shards", "2", "--", "tests", "--collect-only"],
    ],
)
def test_no_test_options_are_exit_2_before_any_shard(capsys, items: Path, argv: list[str]) -> None:
    _one_shard_plan(items.parent)
    code, _, err = run(capsys, *argv)
    assert code == 2, err
    assert "and run no test" in err and "Traceback" not in err
    assert not (items.parent / "ci-shards-results").exists()


@pytest.mark.parametrize(
    "words",
    [["-p", "no:ci_shards"], ["-pno:ci_shards"], ["tests", "-p", "no:ci_shards.pytest_plugin"]],
)
def test_blocking_the_plugin_is_refused_naming_it(capsys, items: Path, words: list[str]) -> None:
    # `-- -p no:ci_shards tests`: the plan's collection failed with "exit 0 before the ci-shards plugin recorded
    # anything: === 1 test collected ===", and a discovery plan's every shard failed with no test report
    with pytest.raises(UsageError, match="stops pytest from loading the ci-shards plugin"):
        check_pytest_words(words)
    check_pytest_words(["-p", "no:randomly", "-k", "no:ci_shards", "-pxdist"])  # other plugins, or a -k value
    _one_shard_plan(items.parent)
    code, _, err = run(capsys, "run", "--plan", "plan.json", "--shard", "1/1", "--pytest", "--", *words)
    assert code == 2 and err.count("\n") == 1 and "-p no:ci_shards" in err, err
    assert not (items.parent / "ci-shards-results").exists()


@pytest.mark.parametrize("word", ["--lf", "--last-failed", "--sw", "--stepwise", "--sw-skip"])
def test_a_discovery_plan_refuses_what_chooses_tests_by_pytests_cache(capsys, items: Path, word: str) -> None:
    # `local --discover -- tests --lf`: plain pytest ran the 1 recorded failure, the shards 3 tests, since a shard
    # whose files hold no recorded failure runs all of them (pytest's rule for a subset of the collection)
    (items.parent / "tests").mkdir()
    (items.parent / "tests" / "test_a.py").write_text("def test_a(): pass\n")
    with pytest.raises(UsageError, match=f"{word!r} chooses tests by pytest's cache of the last run"):
        check_no_cache_selection(["tests", "-k", "x", word])
    check_no_cache_selection(["tests", "--ff", "--nf", "-k", "--lf", "--cache-clear"])  # order only, or a -k value
    code, out, err = run(capsys, "plan", "--discover", "--shards", "2", "--", "tests", word)
    assert (code, out) == (2, "") and err.count("\n") == 1 and "--pytest without --discover" in err, err
    (items.parent / "pytest.ini").write_text(f"[pytest]\naddopts = {word}\n")  # the project's own addopts too
    code, _, err = run(capsys, "plan", "--discover", "--shards", "2", "--", "tests")
    assert code == 2 and f"{word!r} chooses tests" in err, err


@pytest.mark.parametrize("path", ["tests", "tests/test_a.py"])
def test_local_given_a_test_path_as_its_command_is_exit_2_before_any_shard(capsys, items: Path, path: str) -> None:
    # `local --discover -- tests` (pytest-split's habit): each shard failed to start "tests", and the verdict
    # listed every planned file as never run, exit 1, where one line says what to change
    (items.parent / "tests").mkdir()
    (items.parent / "tests" / "test_a.py").write_text("def test_a(): pass\n")
    code, out, err = run(capsys, "local", "--items", "items.txt", "--shards", "2", "--", path)
    assert code == 2
    assert err == f"ci-shards: cannot run {path!r}: {path_not_command(path)}\n"
    assert "give --pytest to run pytest with the words after --" in err
    assert out == ""
    assert not (items.parent / "ci-shards-results").exists()


def test_a_script_that_can_start_is_a_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "check.py"
    script.write_text("#!/usr/bin/env python3\n")
    assert path_not_command("check.py").startswith("a file, not a command")
    script.chmod(0o755)
    assert path_not_command("check.py") == ""  # `-- ./check.py {items}` starts it
    assert path_not_command("check.py", startable=True).startswith("a file")  # it did not start after all
    assert path_not_command("missing.py") == ""  # "command not found" says that one
