"""Plugins that judge the whole session at its end, sharded for real (conformance run 8: syrupy 7.0.1), and the
file a plugin writes once per session in the working folder (run 9: pytest-cov's coverage data file).

syrupy records the collected tests in its ``pytest_collection_modifyitems`` and the selected ones at
``pytest_collection_finish``; at the session's end a snapshot of a test that was collected, selected and did not
use it is unused, and an unused snapshot fails the session (exit 1). A test deselected (``-k``) is not asked for its
snapshot. ``SNAPSHOTS`` reproduces that mechanism without syrupy (not a test dependency): each test of
``tests/test_snap.py`` uses its own snapshot, and the conftest fails the session for every snapshot of a test that
was selected, or of every test when every collected test was selected, but not used.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_pytest_projects import _write, ci_shards

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SNAPSHOTS = {
    "tests/conftest.py": """
        import pytest

        SNAPSHOTS = {f"test_{n}" for n in range(6)}  # what tests/__snapshots__ would hold
        collected, selected, used = set(), set(), set()


        def pytest_collection_modifyitems(items):
            collected.update(item.name for item in items)


        def pytest_collection_finish(session):
            selected.update(item.name for item in session.items)


        @pytest.fixture
        def snapshot(request):
            used.add(request.node.name)


        def pytest_sessionfinish(session):
            asked = SNAPSHOTS if collected == selected else selected
            unused = sorted(asked - used)
            if unused:
                print(f"{len(unused)} snapshots unused: {unused}")
                session.exitstatus = 1
    """,
    "tests/test_snap.py": "".join(f"def test_{n}(snapshot):\n    pass\n\n\n" for n in range(6)),
}


def test_a_file_cut_across_shards_leaves_no_snapshot_unused_as_a_deselection_leaves_none(tmp_path: Path) -> None:
    _write(tmp_path, SNAPSHOTS)
    plain = ci_shards("local", "--shards", "1", "--pytest", "--", "tests", "-p", "no:cacheprovider", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr + plain.stdout
    # the plan cuts test_snap.py in two; each shard's pytest collected the whole file, as `pytest -k` does
    done = ci_shards(
        "local", "--shards", "2", "--granularity", "test", "--pytest", "--", "tests", "-p", "no:cacheprovider",
        cwd=tmp_path,
    )  # fmt: skip
    said = done.stderr + done.stdout
    assert done.returncode == 0, said
    assert "PASSED: 6 tests, 6 passed" in said, said


# pytest-cov's data file: coverage.py's ``.coverage`` in the working folder (conformance run 9, multidict 7.2.1)
DATA_FILE = {
    "tests/conftest.py": """
        import os

        import coverage
        import pytest


        @pytest.fixture(scope="session", autouse=True)
        def data_file():
            # the file pytest-cov's coverage.Coverage() writes (COVERAGE_FILE, else .coverage here): created once
            # in a run, as a plain run creates it; a second process writing the same file fails here
            path = os.path.abspath(coverage.Coverage().config.data_file)
            with open(path, "x", encoding="utf-8"):
                pass
    """,
    **{f"tests/test_{n}.py": "def test_x():\n    pass\n" for n in "abcd"},
}


def test_local_shards_each_write_their_own_coverage_data_file(tmp_path: Path) -> None:
    """The shards of ``local`` run at once in one folder: a shared ``.coverage`` was written by four processes at
    once (multidict's "database disk image is malformed" and 222 errors under --cov-context=test)."""
    _write(tmp_path, DATA_FILE)

    done = ci_shards("local", "--shards", "2", "--pytest", "--", "tests", "-p", "no:cacheprovider", cwd=tmp_path)

    assert done.returncode == 0, done.stderr + done.stdout
    assert "4 passed" in done.stdout
    assert not (tmp_path / ".coverage").exists()
    assert all((tmp_path / "ci-shards-results" / f"shard-{i}-of-2" / ".coverage").is_file() for i in (1, 2))
