"""Inside pytest-xdist's controller: a worker that dies in a test costs that test, once, and nothing else.

pytest-xdist reports the test a dead worker was running (``handle_crashitem``: a failed report "worker 'gw0'
crashed while running ..."), replaces the worker and goes on. Under ``--dist loadfile``/``loadscope`` it also puts
the dead worker's unfinished work unit back in the queue (``LoadScopeScheduling.remove_node``, pytest-xdist 3.8),
the crashed test included, which is still marked pending there: the next worker runs it again, dies again, and
so on until ``--max-worker-restart`` stops the whole session, and the file's other tests never run (seen here
with one ``os._exit`` in a test: ten reports of the same test, its neighbour lost). ``pytest_handlecrashitem``
is xdist's hook for deciding a crashed test's fate; this one marks it done in the re-queued unit, so the
file's remaining tests run once on a fresh worker and the crashed one is reported once (docs/run.md#workers).

Only the standard library and pytest: this runs inside the user's pytest, as the plugin does.
"""

from __future__ import annotations

from typing import Any

PLUGIN_NAME = "ci-shards-xdist"


class CrashedOnce:
    """Registered on the controller only (``pytest_plugin.pytest_configure``), when pytest-xdist is loaded."""

    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        queue = getattr(sched, "workqueue", None)  # LoadScopeScheduling's {scope: {nodeid: completed}}
        if not isinstance(queue, dict):
            return  # --dist load/worksteal do not re-queue the crashed test
        for scope, unit in list(queue.items()):
            if isinstance(unit, dict) and crashitem in unit:
                unit[crashitem] = True
                if all(unit.values()):
                    del queue[scope]
