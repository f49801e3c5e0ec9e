"""A pytest plugin that timestamps where a shard's time goes, process by process (issue 23's timings).

Loaded with ``-p timeline_probe`` and the benchmarks folder on PYTHONPATH, in the controller and in every
pytest-xdist worker alike. Each process appends a line ``<unix time> <pid> <role> <event>`` to the file
``TIMELINE_FILE`` names (nothing when it is unset); ``role`` is ``ctl``, or the worker's ``gw0``, ``gw1``...
The events are the plugin's import (the process has started pytest), ``configure``, ``collected N``,
``first-test``, ``sessionfinish`` (with the end of the process's last test) and ``unconfigure`` (with the
process's CPU seconds). Lines of several processes interleave; append mode keeps each line whole.

For one shard, against the moment the command started::

    start=$(date +%s.%N)
    TIMELINE_FILE=/tmp/tl.txt PYTHONPATH=benchmarks \
        ci-shards run --plan plan.json --shard 1/4 --pytest -- tests -p timeline_probe
    awk -v start=$start '{printf "%+.2f %s %s %s\n", $1 - start, $3, $4, $5}' /tmp/tl.txt
"""

from __future__ import annotations

import os
import resource
import time

import pytest

_FILE = os.environ.get("TIMELINE_FILE")
_seen: dict[str, float] = {}  # "first-test" once one started, "last-test-end": when the latest one ended


def _write(event: str) -> None:
    if _FILE:
        role = os.environ.get("PYTEST_XDIST_WORKER", "ctl")
        with open(_FILE, "a", encoding="utf-8") as timeline:
            timeline.write(f"{time.time():.3f} {os.getpid()} {role} {event}\n")


def pytest_configure(config: pytest.Config) -> None:
    _write("configure")


def pytest_collection_finish(session: pytest.Session) -> None:
    _write(f"collected {len(session.items)}")


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if "first-test" not in _seen:
        _seen["first-test"] = time.time()
        _write("first-test")


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    _seen["last-test-end"] = time.time()


def pytest_sessionfinish(session: pytest.Session) -> None:
    _write(f"sessionfinish last-test-end={_seen.get('last-test-end', 0.0):.3f}")


def pytest_unconfigure(config: pytest.Config) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _write(f"unconfigure cpu={usage.ru_utime + usage.ru_stime:.2f}")


_write("import")
