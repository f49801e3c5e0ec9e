"""run/xdist_hooks.py: the crashed test is marked done in the work unit xdist re-queued (pytest-xdist 3.8's
LoadScopeScheduling.workqueue, {scope: {nodeid: completed}}), so it runs once; the scheduler is a stand-in."""

from __future__ import annotations

from types import SimpleNamespace

from ci_shards.run.xdist_hooks import CrashedOnce


def test_the_crashed_test_is_done_and_its_neighbours_stay_pending() -> None:
    queue = {
        "tests/test_a.py": {
            "tests/test_a.py::before": True,
            "tests/test_a.py::die": False,
            "tests/test_a.py::after": False,
        },
        "tests/test_b.py": {"tests/test_b.py::t": False},
    }
    CrashedOnce().pytest_handlecrashitem("tests/test_a.py::die", report=None, sched=SimpleNamespace(workqueue=queue))
    assert queue["tests/test_a.py"] == {
        "tests/test_a.py::before": True,
        "tests/test_a.py::die": True,
        "tests/test_a.py::after": False,
    }
    assert queue["tests/test_b.py"] == {"tests/test_b.py::t": False}


def test_a_unit_left_with_nothing_to_run_leaves_the_queue() -> None:
    queue = {"tests/test_a.py": {"tests/test_a.py::before": True, "tests/test_a.py::die": False}}
    CrashedOnce().pytest_handlecrashitem("tests/test_a.py::die", report=None, sched=SimpleNamespace(workqueue=queue))
    assert queue == {}


def test_other_schedulers_are_left_alone() -> None:
    sched = SimpleNamespace(pending=["x"])  # --dist load: no work units, the crashed test is not re-queued
    CrashedOnce().pytest_handlecrashitem("x", report=None, sched=sched)
    assert sched.pending == ["x"]
