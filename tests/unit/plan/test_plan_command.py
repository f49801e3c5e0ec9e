"""The plan, matrix and timings commands end to end through ``cli.main`` (real files, real pytest)."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.cli import build_parser, main
from ci_shards.model.matching import item_candidates
from ci_shards.model.plan import Plan
from ci_shards.options.typed import PlanOptions
from ci_shards.plan.estimates import outermost_keys
from ci_shards.plan.front import make_plan
from tests.unit.plan.test_discover import OVERRIDDEN, _write

DEMO_DURATIONS = Path(__file__).resolve().parents[3] / "examples" / "demo" / ".test_durations"
REPO = Path(__file__).resolve().parents[3]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_exact_issue_call_prints_plan_json(capsys, monkeypatch, tmp_path, real_data):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    durations = real_data / "durations" / "conda__conda-lock__tests__durations__ubuntu-latest-py3.13.json"
    code, out, _ = run(
        capsys, "plan", "--durations", str(durations), "--from-timings", "--shards", "4", "--format", "json"
    )
    assert code == 0
    plan = Plan.from_json(json.loads(out))
    assert out == plan.dumps()
    assert plan.created_at == "1970-01-01T00:00:00Z"
    assert plan.total == 4
    code, out2, _ = run(
        capsys,
        "plan",
        "--durations",
        str(durations),
        "--from-timings",
        "--shards",
        "4",
        "--format",
        "json",
        "--granularity",
        "file",
    )
    assert code == 0
    assert json.loads(out2)["granularity"] == "file"
    assert json.loads(out2)["files_cut"] == 0


def test_output_file_and_formats(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(
        capsys, "plan", "--durations", str(DEMO_DURATIONS), "--from-timings", "--shards", "3", "-o", "p.json"
    )
    assert code == 0
    plan = Plan.from_json(json.loads((tmp_path / "p.json").read_text()))
    assert "shard" in out and "lower bound" in out and "3/3" in out
    assert "wrote p.json" in err
    code, out, _ = run(
        capsys, "plan", "--durations", str(DEMO_DURATIONS), "--from-timings", "--shards", "3", "--format", "markdown"
    )
    assert out.startswith("| shard | items | files | estimated s |")
    assert plan.digest in out
    code, out, _ = run(
        capsys,
        "plan",
        "--durations",
        str(DEMO_DURATIONS),
        "--from-timings",
        "--shards",
        "3",
        "--format",
        "json",
        "-o",
        "q.json",
    )
    assert out == ""  # json with -o goes to the file only
    assert Plan.from_json(json.loads((tmp_path / "q.json").read_text())).digest == plan.digest


def test_items_glob_and_stdin(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    for name in ("a_test.py", "b_test.py", "c.txt"):
        (tmp_path / "pkg" / name).write_text("")
    (tmp_path / "list.txt").write_text("# comment\n\nx.py::t1\n  y.py::t2  \n")
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("z.py::t3\n"))
    code, out, _ = run(
        capsys,
        "plan",
        "--glob",
        "pkg/*_test.py",
        "--items",
        "list.txt",
        "--items",
        "-",
        "--shards",
        "2",
        "--format",
        "json",
    )
    assert code == 0
    assert sorted(Plan.from_json(json.loads(out)).items) == [
        "pkg/a_test.py",
        "pkg/b_test.py",
        "x.py::t1",
        "y.py::t2",
        "z.py::t3",
    ]


def test_shards_auto_says_why(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(
        capsys,
        "plan",
        "--durations",
        str(DEMO_DURATIONS),
        "--from-timings",
        "--shards",
        "auto",
        "--target-seconds",
        "5",
        "--shard-overhead",
        "1",
        "--format",
        "json",
    )
    assert code == 0
    plan = Plan.from_json(json.loads(out))
    assert plan.estimated_makespan + 1 <= 5
    assert f"{plan.total} shards: slowest shard " in err


def test_config_file_supplies_defaults_and_flags_override(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    shutil.copy(DEMO_DURATIONS, tmp_path / "durations.json")
    (tmp_path / "ci-shards.yml").write_text("timings: durations.json\nshards: 2\ngranularity: file\n")
    code, out, _ = run(capsys, "plan", "--from-timings", "--format", "json")
    assert code == 0
    plan = json.loads(out)
    assert (plan["total"], plan["granularity"]) == (2, "file")
    code, out, _ = run(capsys, "plan", "--from-timings", "--format", "json", "--shards", "3", "--granularity", "test")
    assert (json.loads(out)["total"], json.loads(out)["granularity"]) == (3, "test")
    (tmp_path / "ci-shards.yml").write_text("shardz: 2\n")
    code, _, err = run(capsys, "plan", "--from-timings")
    assert code == 2
    assert "ci-shards.yml: unknown key 'shardz'" in err


def test_missing_durations_file_is_exit_2_but_the_configured_store_may_be_missing(capsys, monkeypatch, tmp_path):
    # issue 8: `--durations .test_duration` (a typo) planned on guesses; docs/planning.md promises exit 2
    monkeypatch.chdir(tmp_path)
    (tmp_path / "items.txt").write_text("a.py::t\nb.py::t\n")
    plan = ["plan", "--items", "items.txt", "--shards", "2", "--format", "json"]
    code, _, err = run(capsys, *plan, "--durations", "cache/t.json")
    assert code == 2
    assert "cache/t.json: no such timings file (--cached-durations is the flag" in err
    (tmp_path / "empty.json").write_text("{}")
    code, _, err = run(capsys, *plan, "--durations", "empty.json")
    assert (code, err.strip()) == (2, "ci-shards: empty.json: no usable timings in this file (no item with a duration)")
    code, out, err = run(capsys, *plan, "--cached-durations", "cache/t.json")
    assert code == 0
    assert "no cached timings yet" in err
    (tmp_path / "ci-shards.yml").write_text("timings: cache/t.json\n")  # aggregate writes it: absent on a fresh clone
    code, out, err = run(capsys, *plan)
    assert code == 0
    assert "cache/t.json: no timings file yet" in err
    assert json.loads(out)["unknown_items"] == 2
    code, _, err = run(capsys, "plan", "--from-timings", "--shards", "2")
    assert code == 2
    assert "cache/t.json: no such timings file" in err


def test_first_durations_file_wins_per_item(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "store.json").write_text('{"a.py::t": 5.0}')
    (tmp_path / "committed.json").write_text('{"a.py::t": 1.0, "b.py::t": 2.0}')
    code, out, _ = run(
        capsys,
        "plan",
        "--from-timings",
        "--durations",
        "store.json",
        "--durations",
        "committed.json",
        "--shards",
        "1",
        "--format",
        "json",
    )
    assert code == 0
    plan = json.loads(out)
    assert plan["shards"][0]["estimated_seconds"] == 7.0
    assert plan["unknown_items"] == 0


def test_a_timing_covered_by_another_is_planned_under_it(capsys, monkeypatch, tmp_path, real_data):
    """Swiss-Armed-Forces/Loom's .test_durations holds ``test_upload_file`` and ``test_upload_file[".zip-".zip]``
    (the test became parametrized; pytest-split never drops an id). pytest runs the first with all of its cases,
    so planned as two items in two shards, the 335 s case ran in both (corpus sweep, docs/benchmarks.md)."""
    monkeypatch.chdir(tmp_path)
    durations = real_data / "durations" / "Swiss-Armed-Forces__Loom__.test_durations"
    argv = ["plan", "--from-timings", "--durations", str(durations), "--format", "json", "--granularity", "test"]
    code, out, err = run(capsys, *argv, "--shards", "4")
    assert code == 0, err
    plan = json.loads(out)
    where = {item: shard["index"] for shard in plan["shards"] for item in shard["items"]}
    bare = "integrationtest/tests/crawler_test.py::TestCrawler::test_upload_file"
    assert bare in where
    assert f'{bare}[".zip-".zip]' not in where
    timings = json.loads(durations.read_text())
    assert len(where) == len(timings) - 1
    for key in timings:  # every timing's test runs in exactly one shard: pytest's rule, model.matching's
        assert len([c for c in item_candidates(key) if c in where]) == 1, key
    assert "1 timing of ids another timing's id covers planned under it (1 item:" in " ".join(plan["notes"])


def test_a_test_whose_timing_is_unusable_is_still_planned(capsys, monkeypatch, tmp_path, real_data):
    """container-structure-test writes time="999638317" (nanoseconds as seconds): over a day, so no usable timing.
    ``--from-timings`` dropped the test from the plan, and so it ran in no shard; it is planned as an unknown item."""
    monkeypatch.chdir(tmp_path)
    junit = real_data / "junit" / "mikepenz__action-junit-report__test_results__container-structure__test.xml"
    (tmp_path / "d.json").write_text('{"a.py::t": 1.0, "a.py::u": -3.0, "b.py::v": NaN, "b.py::w[1]": 2.0}')
    for durations, want, unknown in ((junit, 3, 1), ("d.json", 4, 2)):
        argv = ["plan", "--from-timings", "--durations", str(durations), "--shards", "2", "--format", "json"]
        code, out, err = run(capsys, *argv)
        assert code == 0, err
        plan = json.loads(out)
        assert len([item for shard in plan["shards"] for item in shard["items"]]) == want
        assert plan["unknown_items"] == unknown
        assert "unusable duration" in err
        assert f"{unknown} of {want} items had no timing" in " ".join(plan["notes"])  # said to be a guess


def test_outermost_keys_fold_a_chain_into_its_outermost_key():
    items, seconds, note = outermost_keys({"a.py": 1.0, "a.py::t": 2.0, "a.py::t[x]": 3.0, "b.py::u": 4.0})
    assert items == ["a.py", "b.py::u"]
    assert seconds == {"a.py": 5.0}  # the estimates folding changed; b.py::u keeps its own
    assert note.startswith("2 timings of ids")
    assert outermost_keys({"a.py::t": 9.0, "a.py::t[x]": 3.0})[1] == {"a.py::t": 9.0}
    assert outermost_keys({"a.py::t": 1.0})[2] == ""


_PARTS = st.sampled_from(["a.py", "b.py", "::", "t", "T", "[", "]", "x", "::t", "[x]", "[a::b]", "s/"])


# chains the fold must walk to their outermost key, beside free-form ids that may cover nothing or something
_CHAINS = st.sampled_from(
    ["a.py", "a.py::t", "a.py::t[x]", "a.py::t[a::b]", "a.py::T", "a.py::T::t", "a.py::T::t[x]", "a.py::t2", "s/"]
)
_KEYS = _CHAINS | st.lists(_PARTS, min_size=1, max_size=6).map("".join)


@given(st.dictionaries(_KEYS, st.floats(0, 9), max_size=25))
@settings(max_examples=300, deadline=None)
def test_outermost_keys_is_the_matchers_rule(timings):
    # the one-pass fold against its definition: each key's covering keys by item_candidates, the outermost kept
    items, seconds, _ = outermost_keys(timings)
    outer = {k: [c for c in item_candidates(k)[1:] if c in timings] for k in timings}
    assert items == sorted(k for k in timings if not outer[k])
    for item in items:
        inner = sum(timings[k] for k in timings if outer[k] and outer[k][-1] == item)
        assert seconds.get(item, timings[item]) == pytest.approx(max(timings[item], inner))


def _one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plan", "--shards", "2"], "no items"),
        (["plan", "--from-timings", "--shards", "2"], "--from-timings needs --durations"),
        (["plan", "--items", "missing.txt", "--shards", "2"], "missing.txt: cannot read the items list"),
        (["plan", "--glob", "nothing/*.py", "--shards", "2"], "nothing/*.py: --glob matched no files"),
        (["plan", "--items", "items.txt"], "--shards is required"),
        (["plan", "--items", "items.txt", "--shards", "0"], "--shards must be a whole number"),
        (["plan", "--items", "items.txt", "--shards", "x"], "--shards must be a whole number"),
        (["plan", "--items", "items.txt", "--shards", "auto"], "--shards auto needs --target-seconds"),
        (["plan", "--items", "items.txt", "--shards", "2", "--weight", "bad"], "expected PATTERN=FACTOR"),
        (["plan", "--items", "items.txt", "--shards", "2", "--weight", "a=-1"], "expected PATTERN=FACTOR"),
        (["plan", "--items", "items.txt", "--shards", "2", "--max-items-per-shard", "0"], "at least 1"),
        (["plan", "--items", "items.txt", "--shards", "2", "tests/"], "arguments after -- are for --pytest"),
        (
            ["plan", "--items", "items.txt", "--shards", "2", "--durations", "bad.json"],
            "bad.json: not valid JSON at line 1",
        ),
        (
            ["plan", "--items", "items.txt", "--shards", "2", "--durations", "."],
            "cannot read timings",
        ),
        (["plan", "--items", "items.txt", "--shards", "2", "--config", "nope.yml"], "nope.yml: config file not found"),
        (["plan", "--items", "items.txt", "--shards", "2", "--granularity", "x"], "invalid choice"),
        (["plan", "--items", "items.txt", "--shards", "auto", "--target-seconds", "-1"], "--target-seconds must be"),
        (
            ["plan", "--items", "items.txt", "--shards", "4", "--target-seconds", "10"],
            "--target-seconds applies only to --shards auto, not to --shards 4",
        ),
        (
            ["plan", "--items", "items.txt", "--shards", "2", "--max-shards", "3", "--target-seconds", "5"],
            "--target-seconds, --max-shards apply only to --shards auto",
        ),
        (
            ["matrix", "--plan", "plan.json", "--shards", "3", "--glob", "*.py"],
            "--plan plan.json cannot be combined with plan options (--glob, --shards)",
        ),
        (
            ["matrix", "--plan", "plan.json", "--pytest", "--", "tests"],
            "cannot be combined with plan options (--pytest, -- PYTEST_ARGS)",
        ),
        (["timings", "import", "-o", "x.json"], "give --junit GLOB"),
        (["timings", "import", "--junit", "none/*.xml", "-o", "x.json"], "none/*.xml: matched no files"),
        (["timings", "merge", "bad.json", "-o", "x.json"], "bad.json: not valid JSON"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, monkeypatch, tmp_path, argv, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "items.txt").write_text("a.py::t\n")
    (tmp_path / "bad.json").write_text("{nope")
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in _one_line_error(err)


def test_every_subcommand_has_help_stating_defaults():
    parser = build_parser()
    for argv in (["plan"], ["matrix"], ["timings", "import"], ["timings", "merge"]):
        sub = parser
        for name in argv:
            sub = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
        sub.format_help()
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert "default" in (action.help or "") or "required" in (action.help or ""), (argv, action.dest)


def test_help_runs(capsys):
    for argv in (
        ["plan", "--help"],
        ["matrix", "--help"],
        ["timings", "import", "--help"],
        ["timings", "merge", "--help"],
    ):
        assert main(argv) == 0
        assert "usage:" in capsys.readouterr().out


def test_timings_import_and_merge(capsys, monkeypatch, tmp_path, real_data):
    monkeypatch.chdir(tmp_path)
    junit = real_data / "junit"
    shutil.copy(junit / "mikepenz__action-junit-report__test_results__python__report.xml", tmp_path / "a.xml")
    shutil.copy(junit / "dorny__test-reporter____tests____fixtures__python-xunit-pytest.xml", tmp_path / "b.xml")
    code, _, err = run(
        capsys, "timings", "import", "--junit", "*.xml", "--durations", str(DEMO_DURATIONS), "-o", "store.json"
    )
    assert code == 0, err
    store = json.loads((tmp_path / "store.json").read_text())
    assert store["schema"] == "ci-shards/timings@1"
    assert "examples/demo/tests/test_math.py::test_add" in store["variants"][""]
    code, _, err = run(capsys, "timings", "import", "--junit", str(tmp_path / "*.xml"), "-o", "abs.json")
    assert code == 0, err  # absolute globs work too
    assert json.loads((tmp_path / "abs.json").read_text())["variants"][""]
    code, out, err = run(capsys, "timings", "merge", "store.json", str(DEMO_DURATIONS), "-o", "-")
    assert code == 0, err
    merged = json.loads(out)
    assert len(merged["variants"][""]["examples/demo/tests/test_math.py::test_add"]) == 2


def test_pytest_collection_on_the_demo(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    code, out, err = run(
        capsys,
        "plan",
        "--pytest",
        "--durations",
        str(DEMO_DURATIONS),
        "--shards",
        "4",
        "--format",
        "json",
        "--",
        "examples/demo/tests",
        "-p",
        "no:cacheprovider",
    )
    assert code == 0, err
    plan = Plan.from_json(json.loads(out))
    assert len(plan.items) == 44
    assert plan.unknown_items == 0
    assert all(s.items for s in plan.shards)
    # the slow module-scoped fixture is set up once: its file is not cut
    assert len([s for s in plan.shards if any("test_fixture_db.py" in i for i in s.items)]) == 1
    assert plan.estimated_makespan / plan.lower_bound_seconds < 1.05


def test_pytest_collection_error_stops_the_plan(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "test_ok.py").write_text("def test_a():\n    pass\n")
    (tmp_path / "test_broken.py").write_text("import no_such_module_here\n")
    code, out, err = run(capsys, "plan", "--pytest", "--shards", "2", "--", str(tmp_path), "-p", "no:cacheprovider")
    assert code == 2
    assert out == ""
    assert "pytest collection failed" in err
    assert "no_such_module_here" in err


def test_make_plan_takes_pytest_args_override(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    options = PlanOptions(pytest=True, shards="2")
    env = {"PATH": "/usr/bin:/bin", "SOURCE_DATE_EPOCH": "86400"}
    plan = make_plan(options, env=env, cwd=tmp_path, pytest_args=["-p", "no:cacheprovider", "test_x.py"])
    assert sorted(plan.items) == ["test_x.py::test_a", "test_x.py::test_b"]
    assert plan.created_at == "1970-01-02T00:00:00Z"


def test_console_script_runs():
    done = subprocess.run(
        [sys.executable, "-m", "ci_shards", "plan", "--items", "-", "--shards", "2", "--format", "json"],
        input="a::t\nb::t\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["total"] == 2


@pytest.mark.parametrize("command", ["plan", "matrix"])
def test_a_corrupt_cached_store_only_warns_but_durations_stays_strict(command, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "items.txt").write_text("a.py::t\nb.py::t\n")
    (tmp_path / "cache.json").write_text('{"schema": "ci-shards/timings@1", "variants": {"": {"a.py::t": [5')
    (tmp_path / "committed.json").write_text('{"a.py::t": 1.0, "b.py::t": 2.0}')
    base = [command, "--items", "items.txt", "--shards", "1"]
    if command == "plan":
        base += ["--format", "json"]
    code, out, err = run(capsys, *base, "--cached-durations", "cache.json", "--durations", "committed.json")
    assert code == 0, err
    assert "cache.json: not valid JSON at line 1" in err
    assert "the cached timings are ignored" in err
    if command == "plan":
        assert json.loads(out)["shards"][0]["estimated_seconds"] == 3.0  # the committed file alone
    code, _, err = run(capsys, *base, "--cached-durations", "absent.json")
    assert code == 0, err
    assert "absent.json" in err
    assert "no cached timings yet" in err
    code, _, err = run(capsys, *base, "--durations", "cache.json")
    assert code == 2
    assert "cache.json: not valid JSON" in _one_line_error(err)


def test_a_good_cached_store_wins_over_durations(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cache.json").write_text('{"a.py::t": 5.0}')
    (tmp_path / "committed.json").write_text('{"a.py::t": 1.0, "b.py::t": 2.0}')
    args = ["--from-timings", "--durations", "committed.json", "--cached-durations", "cache.json", "--shards", "1"]
    code, out, _ = run(capsys, "plan", *args, "--format", "json")
    assert code == 0
    assert json.loads(out)["shards"][0]["estimated_seconds"] == 7.0


@pytest.mark.parametrize(
    ("addopts", "files"),
    [
        ("-o python_files=check_*.py", ["tests/check_c.py"]),
        ("-o testpaths=other", ["other/test_o.py"]),
        ("--ignore=tests/check_c.py -o python_files=*.py", ["tests/test_a.py"]),
    ],
)
def test_a_discovery_plan_reads_pytest_addopts_as_pytest_does(capsys, monkeypatch, tmp_path, addopts, files):
    # pytest puts PYTEST_ADDOPTS between the ini file's addopts and the command line: discovery read neither its
    # -o nor its --ignore, and planned tests/test_a.py where plain pytest, in the same environment, ran check_c.py
    _write(tmp_path, {**OVERRIDDEN, "pytest.ini": "[pytest]\ntestpaths = tests\n"})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTEST_ADDOPTS", addopts)
    code, out, err = run(capsys, "plan", "--discover", "--shards", "2", "--format", "json")
    assert code == 0, err
    assert sorted(i for s in json.loads(out)["shards"] for i in s["items"]) == files
    monkeypatch.setenv("PYTEST_ADDOPTS", "'unclosed")
    code, out, err = run(capsys, "plan", "--discover", "--shards", "2", "--format", "json")
    assert (code, out) == (2, "") and err.startswith("ci-shards: PYTEST_ADDOPTS: cannot split it"), err
