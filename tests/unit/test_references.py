"""Comments and docs point only at what a clone has: no research notes or design file from outside the
repository, and every ``docs/*.md`` named in the sources exists."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = [
    *sorted((REPO / "src").rglob("*.py")),
    *sorted((REPO / "templates").rglob("*.j2")),
    *sorted((REPO / "templates").rglob("*.py")),
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "benchmarks").glob("*.py")),
    REPO / "README.md",
    REPO / "action.yml",
]
OUTSIDE = re.compile(r"notes/[a-z-]+\.md|DESIGN\.md|shared/notes")


def test_no_reference_to_files_outside_the_repository():
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in SOURCES
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not found, "\n".join(found)


def test_every_docs_page_named_in_the_sources_exists():
    named = {
        m.group(0)
        for path in SOURCES
        for m in re.finditer(r"(?<![\w/])docs/[a-z-]+\.md", path.read_text(encoding="utf-8"))
    }
    assert named
    assert sorted(n for n in named if not (REPO / n).is_file()) == []


# Runs each (script, argv) in one interpreter, as `python benchmarks/SCRIPT argv` would (benchmarks/ first on
# sys.path, the script as __main__), and prints one JSON line per command: its exit code, stdout and stderr. One
# process for all of them: a process each cost about 0.2 s, 8 of the fast set's CPU seconds.
_PARSE_EACH = """
import contextlib, io, json, runpy, sys
folder, commands = sys.argv[1], json.load(sys.stdin)
sys.path.insert(0, folder)
for script, argv in commands:
    out, err, code = io.StringIO(), io.StringIO(), 0
    sys.argv = [f"{folder}/{script}", *argv]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    print(json.dumps([code, out.getvalue(), err.getvalue()]))
"""


def test_every_benchmark_command_in_the_docs_is_accepted_by_its_script():
    # docs/benchmarks.md said `benchmarks/e2e.py --suite pyargs` after the suite was renamed `pint-pyargs`:
    # a reader re-running a figure got an argparse error. Each command's options are parsed by the script
    # itself (`--help` last: it stops before any work, but only after every option before it was parsed).
    shown = re.finditer(r"benchmarks/([a-z0-9_]+\.py)((?: [^`\s][^`]*)?)`", (REPO / "docs/benchmarks.md").read_text())
    commands = sorted({m.group(1, 2) for m in shown if m.group(2).strip()})
    assert commands
    parsed = [(script, args, [a.strip("[]") for a in args.split()]) for script, args in commands]
    done = subprocess.run(
        [sys.executable, "-c", _PARSE_EACH, str(REPO / "benchmarks")],
        input=json.dumps([[script, [*argv, "--help"]] for script, _args, argv in parsed]),
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(parsed), done.stderr[-2000:]
    for (script, args, argv), (code, stdout, stderr) in zip(parsed, answers, strict=True):
        assert code == 0, f"{script}{args}: {stderr.strip().splitlines()[-1:]}"
        for option in (a.split("=", 1)[0] for a in argv if a.startswith("--")):  # --opt=value is --opt
            assert re.search(rf"{re.escape(option)}\b(?!-)", stdout), f"{script}{args}: {option} is not an option"
