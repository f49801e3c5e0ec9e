"""The order this suite's tests are dealt to pytest-xdist workers: the longest work first (tests/conftest.py).

pytest-xdist deals work units in the order the workers collected them (``--dist loadfile`` with its unit-size
sort turned off: ``loadscopereorder``, xdist/scheduler/loadscope.py), each worker asking for more as it runs
dry. A 30 s test collected last starts when the other worker has nothing left, and that worker idles to the
end. Dealing the longest units first is the LPT rule (Graham 1969: within 4/3 of the best makespan, and the
last units dealt are the shortest), the same rule ci-shards' planner uses for its shards.

A unit is what ``--dist loadfile`` keeps on one worker: a test module (its module fixtures are built once while
its tests follow each other). Its weight is the sum of its tests' recorded seconds (``tests/durations.json``,
written by ``pytest --record-durations``); a test not recorded yet weighs the median recorded test. Within a
unit, tests keep the collection order.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# (nodeid, unit): the unit is a test's module, as unit_of gives it
Entry = tuple[str, str]


def unit_of(nodeid: str) -> str:
    """The unit a test is dealt in: its module (the part of the id before ``::``, as loadfile splits it)."""
    return nodeid.split("::", 1)[0]


def longest_first(entries: Sequence[Entry], seconds: Mapping[str, float]) -> list[int]:
    """Indices of ``entries`` reordered: units by their summed seconds, heaviest first (ties in collection
    order), each unit's tests together and in collection order. A permutation of ``range(len(entries))``."""
    known = [seconds[nodeid] for nodeid, _unit in entries if nodeid in seconds]
    unknown = statistics.median(known) if known else 0.0
    members: dict[str, list[int]] = {}
    weight: dict[str, float] = {}
    for index, (nodeid, unit) in enumerate(entries):
        members.setdefault(unit, []).append(index)
        weight[unit] = weight.get(unit, 0.0) + seconds.get(nodeid, unknown)
    units = sorted(members, key=lambda unit: -weight[unit])  # stable: equal weights keep collection order
    return [index for unit in units for index in members[unit]]


def read_durations(path: Path) -> dict[str, float]:
    """``{nodeid: seconds}`` (pytest-split's ``.test_durations`` format); nothing if the file is missing or
    not such an object, since the order is an optimisation and never decides what runs."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(k): float(v) for k, v in data.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
    }


def write_durations(path: Path, measured: Mapping[str, float]) -> None:
    """``measured`` merged over what ``path`` holds (a fast run keeps the slow run's tests), written
    atomically: a temporary file beside it, then renamed over it."""
    merged = {**read_durations(path), **{k: round(v, 3) for k, v in measured.items()}}
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(dict(sorted(merged.items())), indent=0) + "\n", encoding="utf-8")
    os.replace(temporary, path)
