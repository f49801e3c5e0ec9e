"""The faults benchmarks/faults.py puts into a file one stage hands to the next (pure: bytes in, bytes out).

Every fault is a function of the file's bytes and a seeded ``random.Random``, so a campaign is
reproduced by its seed. ``None`` back means "delete the file".
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

Fault = Callable[[bytes, random.Random], bytes | None]


def deleted(_data: bytes, _rng: random.Random) -> bytes | None:
    return None


def empty(_data: bytes, _rng: random.Random) -> bytes | None:
    return b""


def truncated(data: bytes, rng: random.Random) -> bytes | None:
    """Cut at a random byte: what a job killed mid-write (or a half-restored cache) leaves."""
    return data[: rng.randrange(1, max(2, len(data)))]


def flipped(data: bytes, rng: random.Random) -> bytes | None:
    """One random bit of one random byte flipped: a bad disk, a bad transfer."""
    if not data:
        return data
    at = rng.randrange(len(data))
    return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]


def _json_edit(edit: Callable[[Any], None]) -> Fault:
    def fault(data: bytes, _rng: random.Random) -> bytes | None:
        value = json.loads(data)
        edit(value)
        return json.dumps(value).encode()

    return fault


def _drop(key: str) -> Callable[[Any], None]:
    def edit(value: Any) -> None:
        value.pop(key, None)

    return edit


def _set(key: str, new: Any) -> Callable[[Any], None]:
    def edit(value: Any) -> None:
        value[key] = new

    return edit


def _extra_plan_shard(plan: Any) -> None:
    extra = dict(plan["shards"][-1], index=len(plan["shards"]) + 1, items=["tests/test_ghost.py"])
    plan["shards"].append(extra)
    plan["total"] = len(plan["shards"])


def _jsonl_edit(edit: Callable[[list[Any]], list[Any]]) -> Fault:
    def fault(data: bytes, _rng: random.Random) -> bytes | None:
        records = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        return "".join(json.dumps(r) + "\n" for r in edit(records)).encode()

    return fault


def _first_without(key: str) -> Callable[[list[Any]], list[Any]]:
    def edit(records: list[Any]) -> list[Any]:
        if records:
            records[0].pop(key, None)
        return records or [{"kind": "failed"}]

    return edit


def _extra_junit_case(data: bytes, _rng: random.Random) -> bytes | None:
    """A testcase of a test no shard planned, in the same suite: a report from somewhere else mixed in."""
    case = b'<testcase classname="tests.test_ghost" name="test_ghost" file="tests/test_ghost.py" time="0.1" />'
    return data.replace(b"</testsuite>", case + b"</testsuite>", 1)


def _junit_without_names(data: bytes, _rng: random.Random) -> bytes | None:
    return re.sub(rb' (name|ci-shards-id)="[^"]*"', b"", data)


SHAPES: dict[str, dict[str, Fault]] = {
    "outcome.json": {
        "field missing": _json_edit(_drop("status")),
        "wrong type": _json_edit(_set("executed_tests", "many")),
        "extra shard": _json_edit(_set("shard_index", 4)),
    },
    "plan.json": {
        "field missing": _json_edit(_drop("shards")),
        "wrong type": _json_edit(_set("total", "three")),  # not "3": the reader takes a digit string as the number
        "extra shard": _json_edit(_extra_plan_shard),
    },
    "junit.xml": {
        "field missing": _junit_without_names,
        "wrong type": lambda _d, _r: b'<?xml version="1.0"?><testsuites><testsuite tests="many"/></testsuites>',
        "extra shard": _extra_junit_case,
    },
    "failures.jsonl": {
        "field missing": _jsonl_edit(_first_without("test_id")),
        "wrong type": lambda _d, _r: b'["not", "an", "object"]\n',
        "extra shard": _jsonl_edit(lambda rs: [*rs, {**(rs[0] if rs else {}), "shard": 9, "test_id": "tests/x.py::t"}]),
    },
    "timings store": {
        "field missing": _json_edit(_drop("schema")),
        "wrong type": _json_edit(_set("variants", ["not", "a", "map"])),
        "extra shard": _json_edit(lambda v: v.setdefault("variants", {}).update({"ghost": {"tests/t.py::t": -5}})),
    },
    "coverage.json": {
        "field missing": _json_edit(_drop("files")),
        "wrong type": _json_edit(_set("completeness", "complete")),
        "extra shard": _json_edit(
            lambda v: v["completeness"]["shards"].append({"index": 9, "state": "folded", "detail": ""})
        ),
    },
    "coverage data": {
        "field missing": lambda _d, _r: _empty_sqlite(),
        "wrong type": lambda _d, _r: b'{"lines": {"pkg/calc.py": "all of them"}}',
    },
}


def _empty_sqlite() -> bytes:
    """A valid SQLite database holding a table coverage.py does not know: its reader must call it what it is."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "db"
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.execute("create table other (x)")
            db.commit()
        return path.read_bytes()


BYTE_FAULTS: dict[str, Fault] = {"deleted": deleted, "empty": empty, "truncated": truncated, "flipped": flipped}
