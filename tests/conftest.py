"""Shared test helpers: where the real data the tests read lives (tests/data, vendored: see SOURCES.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.suite_order import longest_first, read_durations, unit_of, write_durations

REPO = Path(__file__).resolve().parent.parent
REAL_DATA = REPO / "tests" / "data"
DEMO = REPO / "examples" / "demo"
DURATIONS = REPO / "tests" / "durations.json"  # {nodeid: seconds} of every test, for the order (tests/suite_order.py)

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
    parser.addoption(
        "--record-durations",
        action="store_true",
        help="merge this run's seconds per test into tests/durations.json (the order pytest-xdist deals tests in)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--regen-golden"):
        # the golden helpers (tests/unit/golden.py) read the environment, so both spellings are one switch
        os.environ["CI_SHARDS_REGEN_GOLDEN"] = "1"
    if hasattr(config.option, "loadscopereorder"):
        # pytest-xdist (>= 3.7) deals loadgroup/loadscope units biggest group first unless told not to
        # (--no-loadscope-reorder); the order below is by measured seconds, so it must be the one dealt
        config.option.loadscopereorder = False
    if config.getoption("--record-durations") and not hasattr(config, "workerinput"):
        _RECORDING["measured"] = {}  # in the controller, which sees every worker's reports


# "measured": {nodeid: seconds of setup, call and teardown} while --record-durations records (the report hook
# is given no config, so the one session's record lives here)
_RECORDING: dict[str, dict[str, float]] = {}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker, the collection in the order the controller deals it: the longest units first
    (tests/suite_order.py). Every worker reads the same file, so their collections stay identical, as xdist
    requires; a run without -n keeps pytest's own order."""
    if not hasattr(config, "workerinput"):
        return
    entries = []
    for item in items:
        # the group's name as pytest-xdist writes it after the id (xdist/remote.py: "<id>@<names joined by _>")
        names = sorted(
            {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
        )
        group = "_".join(names) if names else None
        nodeid = item.nodeid.removesuffix(f"@{group}") if group else item.nodeid
        entries.append((nodeid, unit_of(nodeid, group)))
    groups = {unit.removeprefix("group:") for _nodeid, unit in entries if unit.startswith("group:")}
    # a run recorded under loadgroup reports the ids with their group; the order weighs them by the plain id
    seconds = {
        (key.rsplit("@", 1)[0] if key.rsplit("@", 1)[-1] in groups else key): value
        for key, value in read_durations(DURATIONS).items()
    }
    order = longest_first(entries, seconds)
    items[:] = [items[index] for index in order]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    measured = _RECORDING.get("measured")
    if measured is not None:
        measured[report.nodeid] = measured.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    measured = _RECORDING.pop("measured", None)
    if measured:
        write_durations(DURATIONS, measured)
