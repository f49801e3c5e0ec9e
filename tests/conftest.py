"""Shared test helpers: where the real data the tests read lives (tests/data, vendored: see SOURCES.md)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.suite_order import longest_first, read_durations, unit_of, write_durations

REPO = Path(__file__).resolve().parent.parent
REAL_DATA = REPO / "tests" / "data"
DEMO = REPO / "examples" / "demo"
DURATIONS = REPO / "tests" / "durations.json"  # {nodeid: seconds} of every test, for the order (tests/suite_order.py)
# What every pytest a test starts gets in PYTEST_ADDOPTS (``_children_skip_hypothesis_plugin``); a test that clears
# the variable for a plain run sets this instead.
CHILD_ADDOPTS = "-p no:hypothesispytest"

# No wall-clock assertions, hypothesis' own included: its default 200 ms deadline per example fails
# property tests on a loaded machine, which says nothing about the property.
settings.register_profile("ci-shards", deadline=None)
settings.load_profile("ci-shards")


@pytest.fixture(autouse=True, scope="session")
def _children_skip_hypothesis_plugin() -> Iterator[None]:
    """Every pytest a test starts (shards, plan collections, the plain-pytest oracles) without hypothesis' plugin.

    It is the venv's (the suite's own property tests need it), not the generated projects': its import is 0.17 of
    a child pytest's 0.43 CPU s of start-up (docs/benchmarks.md, the suite's speed), paid by hundreds of children.
    ``-p no:NAME`` stops pytest from loading the entry point at all. Set in each process that runs tests (an
    xdist worker, or the one process without -n), never in the controller: a worker started after it would read
    PYTEST_ADDOPTS and lose the plugin its own tests use."""
    with pytest.MonkeyPatch.context() as patch:  # the suite's one way to change the environment, session-wide
        patch.setenv("PYTEST_ADDOPTS", f"{os.environ.get('PYTEST_ADDOPTS', '')} {CHILD_ADDOPTS}".strip())
        yield


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


def _ram_temp_root() -> str | None:
    """``/dev/shm`` when it is a file system with room and exec allowed, for ``PYTEST_DEBUG_TEMPROOT``.

    The suite's files are written the way the stages write them: through a temp file, ``fsync`` and a rename
    (ci_shards/common/outfile.py), hundreds per module. On this machine's ext4 that is 4.8 ms and 0.31 CPU ms
    per file at load 20, on tmpfs 0.39 ms and 0.04 CPU ms (docs/benchmarks.md, the suite's speed): the same
    calls, on a file system whose fsync has no disk to wait for. 8 GiB free at least (venvs, an npm install,
    50 MB of output, pytest keeps three sessions' folders), and exec allowed (venvs and scripts run from there)."""
    root = "/dev/shm"
    try:
        stats = os.statvfs(root)
    except OSError:
        return None
    roomy = stats.f_bavail * stats.f_frsize >= 8 << 30
    runnable = not stats.f_flag & os.ST_NOEXEC
    return root if roomy and runnable and os.access(root, os.W_OK | os.X_OK) else None


def pytest_configure(config: pytest.Config) -> None:
    if "PYTEST_DEBUG_TEMPROOT" not in os.environ and config.getoption("basetemp", None) is None:
        # pytest's documented root of tmp_path (docs: "Temporary directory location and retention"); set
        # before the first tmp_path, inherited by the xdist workers and every pytest a test starts
        ram = _ram_temp_root()
        if ram is not None:
            os.environ["PYTEST_DEBUG_TEMPROOT"] = ram
    if config.getoption("--regen-golden"):
        # the golden helpers (tests/unit/golden.py) read the environment, so both spellings are one switch
        os.environ["CI_SHARDS_REGEN_GOLDEN"] = "1"
    if hasattr(config.option, "loadscopereorder"):
        # pytest-xdist (>= 3.7) deals loadfile/loadscope units biggest first unless told not to
        # (--no-loadscope-reorder); the order below is by measured seconds, so it must be the one dealt
        config.option.loadscopereorder = False
    if config.getoption("--record-durations") and not hasattr(config, "workerinput"):
        _RECORDING["measured"] = {}  # in the controller, which sees every worker's reports


# "measured": {nodeid: seconds of setup, call and teardown} while --record-durations records (the report hook
# is given no config, so the one session's record lives here)
_RECORDING: dict[str, dict[str, float]] = {}


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """What ``-n auto`` means for ``pytest -m slow``: one worker more than the cores. Its tests wait on the
    processes they start (act's jobs, shards' deadlines, the demo's sleeps): measured on 2 cores, their workers
    were idle 12 % of the time, and the set took 251 s with 3 workers against 272-279 s with 2 and 266 s with 4,
    the same CPU (docs/benchmarks.md, the suite's speed). The fast set gains nothing (59 s either way): xdist's
    own count there, as for any other -m, and whenever PYTEST_XDIST_AUTO_NUM_WORKERS says. Optional: xdist's
    hook, which `pytest -p no:xdist` does not load (without the flag, pytest refuses the unknown hook)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or config.option.markexpr.strip() != "slow":
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker, the collection in the order the controller deals it: the longest units first
    (tests/suite_order.py). Every worker reads the same file, so their collections stay identical, as xdist
    requires; a run without -n keeps pytest's own order."""
    if not hasattr(config, "workerinput"):
        return
    entries = [(item.nodeid, unit_of(item.nodeid)) for item in items]
    seconds = read_durations(DURATIONS)
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
