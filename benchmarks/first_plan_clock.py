"""A pytest plugin of benchmarks/first_plan.py: the CPU seconds of a shard's tests and of its collection,
apart from the process's start-up (loaded with ``-p first_plan_clock``, the benchmarks folder on
PYTHONPATH; it writes nothing unless ``FIRST_PLAN_CLOCK`` names the JSON file to write).

A shard's whole-process CPU holds what every shard pays alike (the interpreter, pytest and its plugins,
ci-shards' own ``run`` process): on a suite of 1-2 s shards that fixed part is a third of a shard and
pulls slowest/mean towards 1 for any plan. The tests' own CPU (``time.process_time`` around each
test's setup, call and teardown: this process only, so a test's subprocesses are not in it) is what
the plan balanced; collection (importing and walking each test file) is what a shard pays per file.
JUnit's ``time`` is wall time, which the other engineers' load stretches: CPU is the robust figure.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from typing import Any

import pytest

_TESTS: dict[str, float] = {}
_COLLECTED: dict[str, float] = {}  # file → CPU seconds of its collectors (import, classes, items)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, None]:
    start = time.process_time()
    yield
    _TESTS[item.nodeid] = _TESTS.get(item.nodeid, 0.0) + time.process_time() - start


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, None]:
    start = time.process_time()
    yield
    if isinstance(collector, pytest.Module | pytest.Class):  # a package's or a folder's collector holds no test code
        file = collector.nodeid.split("::", 1)[0]
        _COLLECTED[file] = _COLLECTED.get(file, 0.0) + time.process_time() - start


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get("FIRST_PLAN_CLOCK")
    if not path:
        return
    data = {
        "tests_cpu_s": round(sum(_TESTS.values()), 4),
        "collect_cpu_s": round(sum(_COLLECTED.values()), 4),
        "tests": {k: round(v, 5) for k, v in sorted(_TESTS.items())},
        "collected": {k: round(v, 5) for k, v in sorted(_COLLECTED.items())},
    }
    with open(path, "w", encoding="utf-8") as out:
        json.dump(data, out)
