"""Shared test helpers: where the team's real data lives, and skipping with the reason when it doesn't."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
DEMO = REPO / "examples" / "demo"


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` (real duration files and JUnit reports); the test is skipped without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA} (a clone outside the team workspace)")
    return SHARED_DATA
