"""Comments and docs point only at what a clone has: no research notes or design file from outside the
repository, and every ``docs/*.md`` named in the sources exists."""

from __future__ import annotations

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


def test_every_benchmark_command_in_the_docs_is_accepted_by_its_script():
    # docs/benchmarks.md said `benchmarks/e2e.py --suite pyargs` after the suite was renamed `pint-pyargs`:
    # a reader re-running a figure got an argparse error. Each command's options are parsed by the script
    # itself (`--help` last: it stops before any work, but only after every option before it was parsed).
    shown = re.finditer(r"benchmarks/([a-z0-9_]+\.py)((?: [^`\s][^`]*)?)`", (REPO / "docs/benchmarks.md").read_text())
    commands = {m.group(1, 2) for m in shown if m.group(2).strip()}
    assert commands
    for script, args in sorted(commands):
        argv = [a.strip("[]") for a in args.split()]
        done = subprocess.run(
            [sys.executable, str(REPO / "benchmarks" / script), *argv, "--help"],
            capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, f"{script}{args}: {done.stderr.strip().splitlines()[-1:]}"
        for option in (a.split("=", 1)[0] for a in argv if a.startswith("--")):  # --opt=value is --opt
            assert re.search(rf"{re.escape(option)}\b(?!-)", done.stdout), f"{script}{args}: {option} is not an option"
