"""run/xdist_hooks.py against pytest-xdist 3.8's own schedulers (LoadFileScheduling and kin), driven event by
event as DSession drives them: workers that start a test only while holding the next one or a shutdown
(xdist/remote.py), a worker that dies in a test, its replacement joining later (DSession.worker_errordown,
_clone_node, worker_collectionfinish), ``tests_finished`` shutting every worker down. Over generated suites,
crashes and orders of events, every test completes once or is the crashed one, reported once, and the
session never waits with no worker able to start a test. xdist's stock scheduler fails both on fixed cases.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.run.xdist_hooks import CrashedOnce, first_pending, requeue_after_crash

xdist_scheduler = pytest.importorskip("xdist.scheduler")


@dataclass(eq=False)
class Worker:
    """What a scheduler sees of xdist's WorkerController, and the worker's queue of test indices."""

    name: str
    held: list[int] = field(default_factory=list)
    reports: list[int] = field(default_factory=list)  # tests run, their reports not yet read by the controller
    shutting_down: bool = False
    dead: bool = False

    @property
    def gateway(self) -> SimpleNamespace:
        return SimpleNamespace(id=self.name)

    def send_runtest_some(self, indices: list[int]) -> None:
        if self.dead:
            closed = "cannot send (already closed?)"  # execnet, to a worker that has died
            raise OSError(closed)
        self.held.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True

    def can_start(self) -> bool:
        return len(self.held) >= 2 or (self.shutting_down and bool(self.held))


@dataclass
class Session:
    """DSession's part: the events, the crashed tests reported, the workers alive, dying and joining.

    A worker's reports reach the controller in order and late, its death (``errordown``) after them: the
    controller may hand a dead worker more work before it learns of the death."""

    sched: Any
    collection: list[str]
    crashing: str
    plugin: CrashedOnce | None
    alive: list[Worker] = field(default_factory=list)
    dying: list[Worker] = field(default_factory=list)
    joining: list[Worker] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)
    workers_made: int = 0

    def start(self, count: int) -> None:
        for _ in range(count):
            self.alive.append(self._join(self._new_worker()))
        self.sched.schedule()

    def _new_worker(self) -> Worker:
        self.workers_made += 1
        worker = Worker(f"gw{self.workers_made - 1}")
        self.sched.add_node(worker)  # worker_workerready
        return worker

    def _join(self, worker: Worker) -> Worker:
        self.sched.add_node_collection(worker, list(self.collection))  # worker_collectionfinish
        return worker

    def choices(self) -> list[tuple[str, Worker]]:
        runs = [("run", w) for w in self.alive if w.can_start()]
        reports = [("report", w) for w in self.alive + self.dying if w.reports]
        downs = [("down", w) for w in self.dying if not w.reports]
        return runs + reports + downs + [("join", w) for w in self.joining]

    def step(self, kind: str, worker: Worker) -> None:
        if kind == "join":
            self.joining.remove(worker)
            self.alive.append(self._join(worker))
            if self.sched.collection_is_completed:
                self.sched.schedule()
        elif kind == "run":
            index = worker.held.pop(0)
            if self.collection[index] == self.crashing:
                worker.dead = True
                self.alive.remove(worker)
                self.dying.append(worker)
            else:
                worker.reports.append(index)
        elif kind == "report":
            index = worker.reports.pop(0)
            self.completed.append(self.collection[index])
            self.sched.mark_test_complete(worker, index)
        else:
            self._down(worker)
        if self.sched.tests_finished:  # DSession.loop_once: triggershutdown
            for each in self.sched.nodes:
                each.shutdown()
        if self.plugin is not None:  # the counts the plugin's scheduler keeps are xdist's own recount
            for workload in self.sched.assigned_work.values():
                assert self.sched._pending_of(workload) == sum(list(u.values()).count(False) for u in workload.values())

    def _down(self, worker: Worker) -> None:
        self.dying.remove(worker)
        crashitem = self.sched.remove_node(worker)
        if crashitem:
            self.crashed.append(crashitem)
            if self.plugin is not None:
                self.plugin.pytest_handlecrashitem(crashitem=crashitem, report=None, sched=self.sched)
        self.joining.append(self._new_worker())  # _clone_node: ready now, collects later


def _scheduler(kind: str, plugin: CrashedOnce | None, workers: int) -> Any:
    values = {"dist": kind, "tx": [f"{workers}*popen"]}
    config = SimpleNamespace(getvalue=values.get, option=SimpleNamespace(loadscopereorder=True))
    if plugin is not None:
        return plugin.pytest_xdist_make_scheduler(config=config, log=None)
    return {"loadfile": xdist_scheduler.LoadFileScheduling, "loadscope": xdist_scheduler.LoadScopeScheduling}[kind](
        config
    )


def _suite(sizes: list[int]) -> list[str]:
    return [f"tests/test_{f}.py::test_{t}" for f, size in enumerate(sizes) for t in range(size)]


def _play(session: Session, order: list[int], most_events: int = 2000) -> Session:
    session.start(session.sched.numnodes)
    for turn in range(most_events):
        choices = session.choices()
        if not choices or session.workers_made > 12:
            break
        session.step(*choices[order[turn % len(order)] % len(choices)])
    return session


def _session(
    sizes: list[int], crash: int, plugin: CrashedOnce | None, kind: str = "loadfile", workers: int = 2
) -> Session:
    collection = _suite(sizes)
    return Session(_scheduler(kind, plugin, workers), collection, collection[crash % len(collection)], plugin)


def _every_test_once(session: Session) -> None:
    assert session.crashed == [session.crashing]
    assert sorted(session.completed) == sorted(t for t in session.collection if t != session.crashing)
    assert session.choices() == []  # nothing left to start: no worker waits holding a test
    assert all(not w.held for w in session.alive)


@settings(max_examples=300, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=6),
    crash=st.integers(0, 40),
    order=st.lists(st.integers(0, 5), min_size=1, max_size=30),
    workers=st.integers(1, 3),
    kind=st.sampled_from(["loadfile", "loadscope"]),
)
def test_every_test_runs_once_after_a_crash_in_any_order(
    sizes: list[int], crash: int, order: list[int], workers: int, kind: str
) -> None:
    session = _play(_session(sizes, crash, CrashedOnce(), kind, workers), order)
    _every_test_once(session)


def test_stock_xdist_leaves_the_replacement_holding_one_test() -> None:
    # the dead worker's file keeps one test after the crashed one; a file waits in the queue: the replacement
    # gets the one test and never starts it (docs/run.md#workers) - the plugin's scheduler runs it
    sizes, crash, order = [3, 6, 1, 1], 1, [0, 0, 2]
    stock = _session(sizes, crash, None)
    with pytest.raises(AssertionError):
        _every_test_once(_play(stock, order))
    assert any(len(w.held) == 1 and not w.shutting_down for w in stock.alive) and stock.sched.workqueue
    _every_test_once(_play(_session(sizes, crash, CrashedOnce()), order))


def test_stock_xdist_runs_the_crashed_test_again_on_a_survivor() -> None:
    # the survivor is offered the dead worker's unit before pytest_handlecrashitem runs: it dies in it too
    sizes, crash, order = [3, 2], 0, [0]
    stock = _play(_session(sizes, crash, None), order)
    assert len(stock.crashed) > 1
    _every_test_once(_play(_session(sizes, crash, CrashedOnce()), order))


def test_stock_xdist_sends_work_to_a_dead_worker_and_ends_the_session() -> None:
    # the dead worker's last report is read before its death: xdist hands it the next file and execnet's
    # OSError ends the session (pytest-xdist #204); the plugin's scheduler leaves that to the death's event
    sizes, crash, order = [3, 6, 1, 1], 1, [1]
    with pytest.raises(OSError, match="already closed"):
        _play(_session(sizes, crash, None), order)
    _every_test_once(_play(_session(sizes, crash, CrashedOnce()), order))


def test_requeue_marks_the_crashed_test_done_and_drops_finished_units() -> None:
    workload = {"a.py": {"a.py::t1": True}, "b.py": {"b.py::t1": True, "b.py::die": False, "b.py::t3": False}}
    queue: dict[str, dict[str, bool]] = {"c.py": {"c.py::t": False}}
    assert first_pending(workload) == "b.py::die"
    assert requeue_after_crash(workload, queue) == "b.py::die"
    assert list(queue) == ["c.py", "b.py"]
    assert queue["b.py"] == {"b.py::t1": True, "b.py::die": True, "b.py::t3": False}
    assert requeue_after_crash({"a.py": {"a.py::t": True}}, queue) is None


def test_other_dist_modes_get_xdist_s_own_scheduler() -> None:
    config = SimpleNamespace(getvalue={"dist": "load"}.get)
    assert CrashedOnce().pytest_xdist_make_scheduler(config=config, log=None) is None


def test_the_crash_hook_marks_a_re_queued_unit_of_another_scheduler() -> None:
    queue = {"tests/test_a.py": {"tests/test_a.py::before": True, "tests/test_a.py::die": False}}
    CrashedOnce().pytest_handlecrashitem("tests/test_a.py::die", report=None, sched=SimpleNamespace(workqueue=queue))
    assert queue == {}
    sched = SimpleNamespace(pending=["x"])  # --dist load: no work units, the crashed test is not re-queued
    CrashedOnce().pytest_handlecrashitem("x", report=None, sched=sched)
    assert sched.pending == ["x"]


def test_a_unit_is_sent_as_the_indices_xdist_s_own_scan_finds() -> None:
    # pytest collects an id twice when two arguments name it: xdist's list.index sends the first position
    collection = ["tests/test_a.py::t1", "tests/test_a.py::t2", "tests/test_a.py::t1", "tests/test_b.py::t"]
    sent = {}
    for plugin in (None, CrashedOnce()):
        sched = _scheduler("loadfile", plugin, 1)
        worker = Worker("gw0")
        sched.add_node(worker)
        sched.add_node_collection(worker, collection)
        sched.schedule()
        sent[plugin is None] = list(worker.held)
    assert sent[True] == sent[False] == [0, 1, 3]


def test_a_dead_worker_s_unit_is_counted_again_when_another_worker_takes_it() -> None:
    # the plugin's scheduler keeps each unit's pending count as its tests complete (xdist #279); a worker that
    # dies marks its crashed test done behind those counts, and the survivor that takes the unit must see one
    # test pending, not two, or it stops taking work with a test it never starts
    collection = [*(f"tests/test_a.py::t{n}" for n in range(3)), "tests/test_b.py::t", "tests/test_c.py::t"]
    collection.append("tests/test_d.py::t")
    sched = _scheduler("loadfile", CrashedOnce(), 2)
    gw0, gw1 = Worker("gw0"), Worker("gw1")
    for worker in (gw0, gw1):
        sched.add_node(worker)
        sched.add_node_collection(worker, collection)
    sched.schedule()
    assert (gw0.held, gw1.held) == ([0, 1, 2], [3, 4])
    sched.mark_test_complete(gw0, 0)  # counts a.py's unit (2 pending) and hands gw0 test_d.py
    assert sched.remove_node(gw0) == "tests/test_a.py::t1"  # dead in t1
    sched.mark_test_complete(gw1, 3)
    assert gw1.held[-1:] == [2]  # a.py's last test, on the survivor
    workload = sched.assigned_work[gw1]
    assert sched._pending_of(workload) == sum(list(u.values()).count(False) for u in workload.values()) == 2
