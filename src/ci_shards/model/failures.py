"""failures.jsonl (``ci-shards/failure@1``): one record per test that did not pass, and its kind."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from ci_shards.model.fields import require, round_seconds

FAILURE_SCHEMA: Final = "ci-shards/failure@1"


class FailureKind(str, Enum):
    FAILED = "failed"
    ERROR = "error"
    TIMED_OUT = "timed-out"
    FLAKY = "flaky"
    NOT_RUN = "not-run"  # planned, never reported by the runner
    SHARD = "shard"  # a shard-level problem (no report, crash, leak, never started...)


@dataclass(frozen=True, kw_only=True)
class FailureRecord:
    shard: int
    test_id: str
    kind: FailureKind
    message: str
    file: str | None = None
    classname: str = ""
    name: str = ""
    text: str = ""
    attempts: int = 1
    duration: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": FAILURE_SCHEMA,
            "shard": self.shard,
            "test_id": self.test_id,
            "kind": self.kind.value,
            "message": self.message,
            "file": self.file,
            "classname": self.classname,
            "name": self.name,
            "text": self.text,
            "attempts": self.attempts,
            "duration": round_seconds(self.duration),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FailureRecord:
        return cls(
            shard=int(require(data, "shard")),
            test_id=str(require(data, "test_id")),
            kind=FailureKind(require(data, "kind")),
            message=str(data.get("message", "")),
            file=data.get("file"),
            classname=str(data.get("classname", "")),
            name=str(data.get("name", "")),
            text=str(data.get("text", "")),
            attempts=int(data.get("attempts", 1)),
            duration=float(data.get("duration", 0.0)),
        )


def dumps_jsonl(records: Iterable[FailureRecord]) -> str:
    return "".join(json.dumps(r.to_json(), sort_keys=True, ensure_ascii=False) + "\n" for r in records)
