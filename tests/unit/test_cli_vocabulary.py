"""One CLI vocabulary, checked over every subcommand's options (the parser is walked, so a new output flag
without a case here fails): ``-o -`` is stdout, every output flag creates missing parent folders, durations
are echoed as users write them, messages never show Python's type names, and a closed stdout is quiet."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_shards.cli import build_parser, main
from ci_shards.commands.run import parse_duration
from ci_shards.common.console import fmt_duration
from tests.unit.aggregate_fixtures import make_plan, write_all

REPO = Path(__file__).resolve().parents[2]
DURATIONS = REPO / "tests" / "data" / "durations" / "PMEAL__porespy__.test_durations"
JUNIT = REPO / "tests" / "data" / "junit" / "weiwei__junitparser__tests__data__jenkins.xml"
JUNIT_WRITER = (
    "import sys; open(sys.argv[1], 'w').write('<testsuite><testcase classname=\"a\" name=\"t\"/></testsuite>')"
)
WRITE_JUNIT = [sys.executable, "-c", JUNIT_WRITER, "{junit}"]


def _local(flag: str) -> list[str]:
    """``local`` over one item with ``flag`` naming the output."""
    return ["local", "--items", "items.txt", "--shards", "1", "--jobs", "1", flag, "{out}", "--", *WRITE_JUNIT]


# (subcommand, flag) -> the arguments around it; "{out}" is where the flag's value goes.
OUTPUT_CASES: dict[tuple[str, str], list[str]] = {
    ("plan", "--output"): ["plan", "--items", "items.txt", "--shards", "2", "-o", "{out}"],
    ("matrix", "--plan-out"): ["matrix", "--items", "items.txt", "--shards", "2", "--plan-out", "{out}"],
    ("timings import", "--output"): ["timings", "import", "--durations", str(DURATIONS), "-o", "{out}"],
    ("timings merge", "--output"): ["timings", "merge", str(DURATIONS), "-o", "{out}"],
    ("junit merge", "--output"): ["junit", "merge", str(JUNIT), "-o", "{out}"],
    ("aggregate", "--junit-out"): ["aggregate", "--plan", "plan.json", "shards", "--junit-out", "{out}"],
    ("aggregate", "--failures"): ["aggregate", "--plan", "plan.json", "shards", "--failures", "{out}"],
    ("aggregate", "--summary"): ["aggregate", "--plan", "plan.json", "shards", "--summary", "{out}"],
    ("aggregate", "--timings-out"): ["aggregate", "--plan", "plan.json", "shards", "--timings-out", "{out}"],
    ("aggregate", "--comment-out"): ["aggregate", "--plan", "plan.json", "shards", "--comment-out", "{out}"],
    ("aggregate", "--coverage-out"): ["aggregate", "--plan", "plan.json", "shards", "--coverage-out", "{out}"],
    ("run", "--out"): ["run", "--plan", "one.json", "--shard", "1/1", "--out", "{out}", "--", *WRITE_JUNIT],
    **{("local", flag): _local(flag) for flag in ("--out", "--junit-out", "--summary", "--failures", "--timings-out")},
}
FOLDER_FLAGS = {
    ("run", "--out"),
    ("local", "--out"),
    ("aggregate", "--coverage-out"),
}  # a results folder, not a file: `-` means nothing there


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*path, name))
        elif action.option_strings:
            yield " ".join(path), action


def _long(action: argparse.Action) -> str:
    return max(action.option_strings, key=len)


def _is_output(action: argparse.Action) -> bool:
    return any(o in ("-o", "--output", "--out") or o.endswith("-out") for o in action.option_strings)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "items.txt").write_text("tests/test_a.py::test_one\ntests/test_b.py::test_two\n")
    plan = make_plan([["tests/test_a.py::test_one"], ["tests/test_b.py::test_two"]])
    (tmp_path / "plan.json").write_text(plan.dumps())
    write_all(tmp_path / "shards", plan)
    (tmp_path / "one.json").write_text(make_plan([["a::t"]]).dumps())
    return tmp_path


def test_every_output_flag_has_a_case():
    found = {(path, _long(a)) for path, a in _walk(build_parser()) if _is_output(a)}
    assert found <= set(OUTPUT_CASES), f"output flags without a case here: {sorted(found - set(OUTPUT_CASES))}"


def _visible(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.Action]]:
    return ((path, a) for path, a in _walk(parser) if a.help != argparse.SUPPRESS)


def test_a_flag_name_is_an_input_or_an_output_never_both():
    uses: dict[str, set[bool]] = {}
    for path, action in _visible(build_parser()):
        for option in action.option_strings:
            uses.setdefault(option, set()).add((path, _long(action)) in OUTPUT_CASES)
    assert sorted(o for o, kinds in uses.items() if len(kinds) > 1) == []


@pytest.mark.parametrize(
    ("dests", "name"),
    [
        ({"variant", "timings_variant"}, "--variant"),
        ({"mode", "comment_mode"}, "--comment-mode"),
        ({"key", "comment_key"}, "--comment-key"),
    ],
)
def test_one_name_per_concept(dests, name):
    """Every visible flag holding a concept is spelled the same in every subcommand."""
    spellings = {_long(a) for _path, a in _visible(build_parser()) if a.dest in dests}
    assert spellings == {name}


@pytest.mark.parametrize(
    ("argv", "old", "new"),
    [
        (["aggregate", "--plan", "plan.json", "shards", "--junit", "{out}"], "--junit", "--junit-out"),
        (_local("--merged-junit"), "--merged-junit", "--junit-out"),
        (
            ["aggregate", "--plan", "plan.json", "shards", "--timings-out", "t.json", "--timings-variant", "v"],
            "--timings-variant",
            "--variant",
        ),
    ],
)
def test_old_names_still_work_with_a_warning_and_are_hidden(argv, old, new, workdir, capsys):
    out = workdir / "merged.xml"
    assert main([str(out) if a == "{out}" else a for a in argv]) in (0, 1)
    err = capsys.readouterr().err
    # a ci-shards line like every other, not `warning:` (issue 27)
    assert f"ci-shards: {old} is deprecated: use {new} (same meaning)" in err.splitlines()
    if old in ("--junit", "--merged-junit"):
        assert out.is_file()
    else:
        assert "v" in json.loads((workdir / "t.json").read_text())["variants"]
    assert main([argv[0], "--help"]) == 0
    assert f"{old} " not in capsys.readouterr().out


def test_comment_old_names_parse_as_the_new_ones():
    old = build_parser().parse_args(["comment", "--body-file", "b.md", "--mode", "off", "--key", "k"])
    new = build_parser().parse_args(["comment", "--body-file", "b.md", "--comment-mode", "off", "--comment-key", "k"])
    assert (old.mode, old.key) == (new.mode, new.key) == ("off", "k")


def test_every_dash_o_says_it_takes_dash_for_stdout():
    dash_o = [(path, a) for path, a in _walk(build_parser()) if "-o" in a.option_strings]
    assert dash_o
    for path, action in dash_o:
        assert "- for stdout" in (action.help or ""), path


@pytest.mark.parametrize("case", sorted(OUTPUT_CASES), ids=" ".join)
def test_output_flags_create_missing_parent_folders(case, workdir, capsys):
    out = workdir / "new" / "dir" / "product"
    argv = [str(out) if a == "{out}" else a for a in OUTPUT_CASES[case]]
    code = main(argv)
    err = capsys.readouterr().err
    assert code in (0, 1), err  # 1: aggregate's fixture verdict may fail; the file is written either way
    assert out.is_dir() if case in FOLDER_FLAGS else out.is_file(), err


@pytest.mark.parametrize("case", sorted(c for c in OUTPUT_CASES if c[1] == "--output"), ids=" ".join)
def test_dash_o_dash_is_stdout(case, workdir, capsys):
    argv = ["-" if a == "{out}" else a for a in OUTPUT_CASES[case]]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert not (workdir / "-").exists()
    assert out.strip(), err
    if case[0] == "junit merge":
        assert out.startswith("<?xml") and "<testcase" in out
    else:
        assert json.loads(out)["schema"].startswith("ci-shards/")  # the product itself, not a table
    assert "into -" not in err and "wrote -" not in err


def test_plan_table_moves_to_stderr_when_stdout_carries_the_plan(workdir, capsys):
    assert main(["plan", "--items", "items.txt", "--shards", "2", "-o", "-", "--format", "table"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["total"] == 2
    assert "shard" in err


def test_matrix_plan_out_dash_is_refused_not_a_file_named_dash(workdir, capsys):
    assert main(["matrix", "--items", "items.txt", "--shards", "2", "--plan-out", "-"]) == 2
    assert "stdout carries the matrix" in capsys.readouterr().err
    assert not (workdir / "-").exists()


# --------------------------------------------------------------------------------------------
# durations as users write them


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(1800, "30m"), (7200, "2h"), (5400, "90m"), (10, "10s"), (1.5, "1.5s"), (0.5, "500ms"), (90.5, "90.5s")],
)
def test_fmt_duration(seconds, text):
    assert fmt_duration(seconds) == text


@given(st.integers(min_value=0, max_value=10**7), st.sampled_from([1, 60, 3600, 0.001, 0.5]))
def test_fmt_duration_reads_back_as_the_same_value(count, unit):
    seconds = count * unit
    assert parse_duration(fmt_duration(seconds)) == pytest.approx(seconds, rel=1e-9, abs=1e-9)


def test_run_echoes_the_timeout_as_written(tmp_path):
    (tmp_path / "one.json").write_text(make_plan([["a::t"]]).dumps())
    argv = ["run", "--plan", "one.json", "--shard", "1/1", "--timeout", "30m", "--", sys.executable, "-c"]
    proc = subprocess.run(
        [sys.executable, "-m", "ci_shards", *argv, JUNIT_WRITER, "{junit}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "timeout 30m" in proc.stderr, proc.stderr
    assert "1800" not in proc.stderr


@pytest.mark.slow
def test_a_timed_out_shard_names_its_limit_as_written(tmp_path):
    (tmp_path / "one.json").write_text(make_plan([["a::t"]]).dumps())
    argv = ["run", "--plan", "one.json", "--shard", "1/1", "--timeout", "1s", "--grace", "500ms", "--out", "out"]
    proc = subprocess.run(
        [sys.executable, "-m", "ci_shards", *argv, "--", sys.executable, "-c", "import time; time.sleep(60)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    reason = json.loads((tmp_path / "out" / "shard-1-of-1" / "outcome.json").read_text())["reason"]
    assert proc.returncode == 1
    assert "shard deadline of 1s" in reason, reason


# --------------------------------------------------------------------------------------------
# messages in the user's words

PYTHON_WORDS = ("NoneType", "'int'", "'str'", "'dict'", "'list'", "'float'", "'bool'", " None", " True", "object is")


@pytest.mark.parametrize("field", ["shards", "total", "granularity", "files_cut", "lower_bound_seconds", "schema"])
@pytest.mark.parametrize("value", [None, True, [], {}, "x", 1.5])
def test_a_bad_plan_field_is_named_in_json_words(field, value, workdir, capsys):
    data = json.loads((workdir / "plan.json").read_text())
    data[field] = value
    del data["digest"]
    (workdir / "bad.json").write_text(json.dumps(data))
    code = main(["matrix", "--plan", "bad.json", "--plan-out", "x.json"])
    err = capsys.readouterr().err
    if code == 0:
        return  # a value the plan accepts (e.g. lower_bound_seconds 1.5)
    assert code == 2
    assert not any(word in err for word in PYTHON_WORDS), err


@pytest.mark.parametrize("value", [None, True, [], {}, "x", 1.5])
def test_a_bad_shard_field_is_named_in_json_words(value, workdir, capsys):
    data = json.loads((workdir / "plan.json").read_text())
    data["shards"][0]["index"] = value
    data["shards"][1]["estimated_seconds"] = value
    del data["digest"]
    (workdir / "bad.json").write_text(json.dumps(data))
    assert main(["matrix", "--plan", "bad.json", "--plan-out", "x.json"]) == 2
    err = capsys.readouterr().err
    assert not any(word in err for word in PYTHON_WORDS), err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- a\n", "expected a mapping of settings, found a list"),
        ("shards:\n", "'shards' must be a whole number ≥ 1 or 'auto', not null"),
        ("shards: true\n", "not true"),
        ("target-seconds: null\n", "'target-seconds' must be a non-negative number, not null"),
        ("granularity: [a]\n", 'not ["a"]'),
        ("variant: 3\n", "'variant' must be a non-empty string, not 3"),
    ],
)
def test_config_errors_speak_yaml(text, expected, workdir, capsys):
    (workdir / "ci-shards.yml").write_text(text)
    assert main(["plan", "--items", "items.txt", "--shards", "2"]) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert not any(word in err for word in PYTHON_WORDS), err


@pytest.mark.parametrize(("content", "kind"), [("5", "a number"), ('"x"', "a string"), ("null", "null")])
def test_timings_file_of_the_wrong_kind_is_named_in_json_words(content, kind, workdir, capsys):
    (workdir / "d.json").write_text(content)
    assert main(["plan", "--items", "items.txt", "--durations", "d.json", "--shards", "2"]) == 2
    err = capsys.readouterr().err
    assert f"found {kind}" in err, err
    assert not any(word in err for word in PYTHON_WORDS), err


# --------------------------------------------------------------------------------------------
# a closed stdout


def _env() -> dict[str, str]:
    # buffered stdout as users have it; unbuffered, the flush at exit that this guards would never happen
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "GITHUB_ACTIONS")}


@pytest.mark.parametrize("argv", [["plan", "--items", "items.txt", "--shards", "2"], ["--version"], ["plan", "--help"]])
def test_stdout_closed_before_the_first_write_exits_2_without_a_word(argv, workdir):
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "ci_shards", *argv],
            cwd=workdir,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
            timeout=60,
            check=False,
        )
    finally:
        os.close(write)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Exception ignored" not in proc.stderr
    assert "BrokenPipe" not in proc.stderr
    assert "Broken pipe" not in proc.stderr


def test_plan_piped_into_head_exits_quietly(workdir):
    (workdir / "many.txt").write_text("".join(f"tests/test_{i % 300}.py::test_{i}\n" for i in range(20000)))
    script = (
        f'set -o pipefail; "{sys.executable}" -m ci_shards plan --items many.txt --shards 4 --format json | head -1'
    )
    proc = subprocess.run(
        ["bash", "-c", script], cwd=workdir, capture_output=True, text=True, env=_env(), timeout=60, check=False
    )
    assert proc.stdout == "{\n"
    assert proc.returncode in (0, 2), proc.stderr  # 0 when the whole plan fitted in the pipe before head left
    assert "Traceback" not in proc.stderr
    assert "Exception ignored" not in proc.stderr
    assert "Broken pipe" not in proc.stderr


def test_help_names_values_by_what_they_hold_and_lists_only_user_commands(capsys):
    # issue 27: aggregate showed `--summary SUMMARY` and `--timings-out TIMINGS_OUT`; `gha` (the action's
    # internals) sat beside the user commands; --pytest said it runs `python -m pytest --collect-only -q`
    raw = [
        f"{path} {_long(a)} {a.metavar or a.dest.upper()}"
        for path, a in _visible(build_parser())
        if a.nargs != 0 and not a.choices and "_" in (a.metavar or a.dest.upper())
    ]
    assert raw == []
    assert main(["--help"]) == 0
    listing = capsys.readouterr().out
    assert "\n    gha" not in listing and "\n    plan" in listing
    assert main(["gha", "--help"]) == 0  # hidden, not gone
    for command in ("plan", "matrix", "local"):
        assert main([command, "--help"]) == 0
        assert "--collect-only -q" not in capsys.readouterr().out
