"""Shared test helpers: where the real data the tests read lives (tests/data, vendored: see SOURCES.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parent.parent
REAL_DATA = REPO / "tests" / "data"
DEMO = REPO / "examples" / "demo"

# No wall-clock assertions, hypothesis' own included: its default 200 ms deadline per example fails
# property tests on a loaded machine, which says nothing about the property.
settings.register_profile("ci-shards", deadline=None)
settings.load_profile("ci-shards")


@pytest.fixture
def real_data() -> Path:
    """``tests/data``: real duration files (``durations/``) and JUnit reports (``junit/``) from public projects."""
    return REAL_DATA


@pytest.fixture
def shared_data(real_data: Path) -> Path:
    """The old name of ``real_data``, kept so tests written against it still run; it reads tests/data too."""
    return real_data


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen-golden",
        action="store_true",
        help="rewrite the golden files under tests/data from the current output (same as CI_SHARDS_REGEN_GOLDEN=1)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--regen-golden"):
        # the golden helpers (tests/unit/golden.py) read the environment, so both spellings are one switch
        os.environ["CI_SHARDS_REGEN_GOLDEN"] = "1"
