"""Comments and docs point only at what a clone has: no research notes or design file from outside the
repository, and every ``docs/*.md`` named in the sources exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = [
    *sorted((REPO / "src").rglob("*.py")),
    *sorted((REPO / "src").rglob("*.j2")),
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
