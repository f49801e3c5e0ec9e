"""Inside pytest-xdist's controller: a worker that dies in a test costs that test, once, and nothing else.

pytest-xdist 3.8 reports the test a dead worker was running (``DSession.handle_crashitem``: a failed report
"worker 'gw0' crashed while running ..."), starts a replacement worker and goes on. Under ``--dist
loadfile``/``loadscope``/``loadgroup`` (all ``LoadScopeScheduling``) three faults follow a crash:

1. ``remove_node`` puts the dead worker's work units back in the queue with the crashed test still pending
   and at once offers them to the surviving workers (``_reschedule``), before any hook runs: a survivor
   that takes the unit runs the crashed test again and dies too, and so on until ``--max-worker-restart``
   ends the session with the file's other tests lost (seen: ten reports of one ``os._exit`` test).
   ``pytest_handlecrashitem`` comes too late to prevent it, so the crashed test is marked done here before
   the unit is queued again.
2. A worker runs a test only once it holds the next one too (pytest's ``nextitem``: xdist's worker waits
   for two items or ``shutdown``), and the scheduler gives a worker more work only when one of its tests
   completes or when a worker joins (``schedule`` then calls ``_reschedule`` once per worker, which hands
   out one unit). The replacement worker that joins and gets a unit with one test left (the crashed
   file's last neighbour) while other units wait in the queue holds that one test and never starts it:
   no test completes, nothing reschedules, every worker idles and the session waits for an event until
   the shard's deadline (seen in 6 of 8 plain ``pytest -n 2 --dist loadfile`` runs of tests/e2e/run/
   test_workers.py's project). After a worker joins or leaves, each worker here is topped up until it holds
   two tests or the queue is empty, the rule xdist's first ``schedule`` keeps ("at least two work units",
   pytest-xdist #277) and ``_reschedule`` keeps for a worker that completes a test.
3. The controller learns of a worker's death from an event queued behind that worker's last reports: handling
   a test the dead worker completed (``mark_test_complete`` → ``_reschedule``) sends it more work down a closed
   channel, and execnet's ``OSError`` ("cannot send (already closed?)") ends the whole session as an
   INTERNALERROR with every queued test unreported (pytest-xdist #204, open; seen in 3 of 10 runs of tests/e2e/
   run/test_workers.py's project at load 5). xdist's own ``shutdown`` swallows that error; here a send of work
   does too: the unit stays assigned to the dead worker, and the death's own event (``errordown`` →
   ``remove_node``) queues it again for the survivors.

``pytest_xdist_make_scheduler`` (a firstresult hook, xdist's own implementation is ``trylast``) returns the
scheduler of ``--dist`` with the three repairs; other modes get xdist's own (``load``/``worksteal`` never queue the
crashed test again, and hand a joining worker two or more tests). ``pytest_handlecrashitem`` stays for a
scheduler another plugin made. docs/run.md#workers.

Only the standard library and pytest at import: this runs inside the user's pytest, as the plugin does;
pytest-xdist is imported only when its hook is called.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

PLUGIN_NAME = "ci-shards-xdist"

# a worker starts a test only while it holds the next one too (xdist/remote.py, WorkerInteractor)
HELD_TO_RUN = 2


def spread_scope(nodeid: str) -> str:
    """The work unit of a test in a file the plan spreads over the workers: its top-level class
    (``file::Class``), or its function with all its parametrized cases (``file::test_x``), so class
    fixtures are still set up once per worker, and a file bigger than a worker's share runs on all of
    them (``ShardPlan.spread``, plan/workers.py models the same units)."""
    parts = nodeid.split("::")
    if len(parts) >= 3:
        return f"{parts[0]}::{parts[1]}"
    if len(parts) == 2:
        return f"{parts[0]}::{parts[1].split('[', 1)[0]}"
    return nodeid


def first_pending(workload: dict[str, dict[str, bool]]) -> str | None:
    """The test a worker was running when it died: its first test not completed (xdist's own rule)."""
    for unit in workload.values():
        for nodeid, done in unit.items():
            if not done:
                return nodeid
    return None


def requeue_after_crash(workload: dict[str, dict[str, bool]], queue: dict[str, dict[str, bool]]) -> str | None:
    """Put a dead worker's unfinished units back at the queue's end, its crashed test marked done; the crashed
    test's id, or None when nothing was pending (a worker that died between tests)."""
    crashed = first_pending(workload)
    if crashed is None:
        return None
    for scope, unit in workload.items():
        if crashed in unit:
            unit[crashed] = True
        if not all(unit.values()):  # xdist queues completed units too: they would be sent as empty work
            queue[scope] = unit
    return crashed


class _KeptCounts:
    """xdist's ``LoadScopeScheduling`` bookkeeping at a cost that grows with the tests, not their square: put
    before the xdist scheduler in a class's bases (``_crash_safe``), its methods replace xdist's own.

    xdist counts a worker's pending tests by reading every test it was ever given, after each test (pytest-xdist
    #279), and finds each test of a unit it hands out by a scan of the worker's collection (#1212). A packaging
    26.4 shard of 16,501 tests took 25 s under ``-n 2 --dist loadfile``, against 11 s in one process
    (docs/benchmarks.md, conformance run 14). Here a unit's pending count is kept as its tests complete, and
    each worker's collection is indexed once."""

    # xdist's, read and written here as xdist does (it ships no type information)
    assigned_work: dict[Any, dict[str, dict[str, bool]]]
    registered_collections: dict[Any, list[str]]
    workqueue: Any  # an OrderedDict {scope: {nodeid: completed}}
    _split_scope: Callable[[str], str]
    _reschedule: Callable[[Any], None]

    _pending_units: dict[int, tuple[dict[str, bool], int]]  # id(unit) → (the unit, kept alive; its pending)
    _positions: dict[Any, dict[str, int]]  # worker → {node id: its first index in the worker's collection}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending_units, self._positions = {}, {}

    def _pending_of(self, workload: dict[str, dict[str, bool]]) -> int:
        return sum(self._unit_pending(unit) for unit in workload.values())

    def _unit_pending(self, unit: dict[str, bool]) -> int:
        if id(unit) not in self._pending_units:
            self._pending_units[id(unit)] = (unit, list(unit.values()).count(False))
        return self._pending_units[id(unit)][1]

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        # xdist's own, the unit's pending count kept
        nodeid = self.registered_collections[node][item_index]
        unit = self.assigned_work[node][self._split_scope(nodeid)]
        if unit.get(nodeid) is False and id(unit) in self._pending_units:
            self._pending_units[id(unit)] = (unit, self._pending_units[id(unit)][1] - 1)
        unit[nodeid] = True
        self._reschedule(node)

    def forget_pending(self, unit: dict[str, bool]) -> None:
        """``unit`` was changed outside the scheduler (``pytest_handlecrashitem``): count it again."""
        self._pending_units.pop(id(unit), None)

    def _forget_worker(self, node: Any, workload: dict[str, dict[str, bool]]) -> None:
        """A worker that left: its index, and the counts of its units, which are changed behind them when its
        crashed test is marked done (``requeue_after_crash``)."""
        self._positions.pop(node, None)
        for unit in workload.values():
            self.forget_pending(unit)

    def _assign_work_unit(self, node: Any) -> None:
        # xdist's own, each test found through the worker's index; the unit stays assigned when the send fails
        scope, unit = self.workqueue.popitem(last=False)
        self.assigned_work.setdefault(node, {})[scope] = unit
        if node not in self._positions:
            positions: dict[str, int] = {}
            for index, nodeid in enumerate(self.registered_collections[node]):
                positions.setdefault(nodeid, index)  # list.index's answer: the first
            self._positions[node] = positions
        indices = [self._positions[node][nodeid] for nodeid, completed in unit.items() if not completed]
        with contextlib.suppress(OSError):  # a dead worker's channel (repair 3): its errordown re-queues the unit
            node.send_runtest_some(indices)


def _crash_safe(base: type[Any]) -> type[Any]:
    class CrashSafe(_KeptCounts, base):  # type: ignore[misc]
        """xdist's ``base`` scheduler with the three repairs of this module's docstring."""

        def remove_node(self, node: Any) -> str | None:
            workload = self.assigned_work.pop(node)
            self._forget_worker(node, workload)
            crashed = requeue_after_crash(workload, self.workqueue)
            self._top_up_all()
            return crashed

        def schedule(self) -> None:
            super().schedule()
            if self.collection:
                self._top_up_all()

        scope_of: Callable[[str], str | None] | None = None  # the plan's spread files (``CrashedOnce``)

        def _split_scope(self, nodeid: str) -> str:
            scope = self.scope_of(nodeid) if self.scope_of is not None else None
            return scope if scope is not None else str(super()._split_scope(nodeid))

        def _top_up_all(self) -> None:
            for worker in self.nodes:
                if worker not in self.registered_collections:
                    continue  # joined, still collecting: schedule() tops it up when it has
                while (
                    self.workqueue
                    and not worker.shutting_down
                    and self._pending_of(self.assigned_work[worker]) < HELD_TO_RUN
                ):
                    self._assign_work_unit(worker)
                if not self.workqueue and not worker.shutting_down and self.collection:
                    self._reschedule(worker)  # xdist's own: an empty queue shuts the worker down

    CrashSafe.__name__ = CrashSafe.__qualname__ = f"CrashSafe{base.__name__}"
    return CrashSafe


class CrashedOnce:
    """Registered on the controller only (``pytest_plugin.pytest_configure``), when pytest-xdist is loaded.
    ``scope_of`` gives the work unit of a test in a file the plan spreads over the workers (None: xdist's)."""

    def __init__(self, scope_of: Callable[[str], str | None] | None = None) -> None:
        self.scope_of = scope_of

    def pytest_xdist_make_scheduler(self, config: Any, log: Any) -> Any:
        # only here: the plugin loads without pytest-xdist; xdist ships no type information
        from xdist.scheduler import LoadFileScheduling, LoadGroupScheduling, LoadScopeScheduling  # type: ignore[import-untyped]  # noqa: PLC0415

        kinds = {"loadfile": LoadFileScheduling, "loadscope": LoadScopeScheduling, "loadgroup": LoadGroupScheduling}
        base = kinds.get(config.getvalue("dist"))
        if base is None:
            return None
        scheduler = _crash_safe(base)(config, log)
        scheduler.scope_of = self.scope_of
        return scheduler

    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        queue = getattr(sched, "workqueue", None)  # LoadScopeScheduling's {scope: {nodeid: completed}}
        if not isinstance(queue, dict):
            return  # --dist load/worksteal do not re-queue the crashed test
        for scope, unit in list(queue.items()):
            if isinstance(unit, dict) and crashitem in unit:
                unit[crashitem] = True
                forget = getattr(sched, "forget_pending", None)  # a scheduler of this module keeps counts
                if forget is not None:
                    forget(unit)
                if all(unit.values()):
                    del queue[scope]
