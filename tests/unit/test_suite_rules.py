"""Rules the test suite keeps (COMMON: no wall-clock assertions, a clone alone runs every test)."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import settings

TESTS = Path(__file__).resolve().parents[1]
TEST_FILES = sorted(
    p for p in TESTS.rglob("*.py") if "data" not in p.relative_to(TESTS).parts and p != Path(__file__).resolve()
)


def _lines(pattern: str) -> list[str]:
    regex = re.compile(pattern)
    return [
        f"{path.relative_to(TESTS)}:{n}: {line.strip()}"
        for path in TEST_FILES
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if regex.search(line)
    ]


def test_hypothesis_has_no_deadline():
    assert settings.default.deadline is None


def test_no_assertion_on_the_clock():
    assert _lines(r"^\s*assert\b.*(monotonic|perf_counter|time\.time|\btook\b|elapsed)") == []


def test_no_test_reads_the_team_workspace():
    assert _lines(r"\.\./shared|parent / \"shared\"|shared\" / \"data") == []
