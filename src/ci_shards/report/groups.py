"""Grouping identical failures, and sampling fairly across shards. Pure.

When one bug breaks 37 tests, the report should say so once ("x 37 tests") instead of 37 times,
and when 5,000 tests fail the reader should still see every distinct failure and tests from
every shard, not the first page of shard 1. Two failures are the same when they have the same
kind, exception type and message once the parts that differ between runs and tests are masked:
numbers, hex addresses and temporary paths.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from ci_shards.model.failures import FailureRecord

T = TypeVar("T")

KEY_CHARS: Final = 1000  # messages that agree this far are the same failure

# temporary paths first (they hold numbers and hex), then addresses, then any other number
_MASKS: Final = (
    # POSIX temp dirs, macOS /var/folders (also under /private), pytest's tmp_path below them
    (re.compile(r"(?:/private)?/(?:tmp|var/tmp|var/folders)/[^\s'\"(),;:]*"), "<tmp>"),
    # Windows: ...\AppData\Local\Temp\... and C:\Windows\Temp\...
    (re.compile(r"(?i)[a-z]:\\(?:[^\s'\"\\]+\\)*?temp\\[^\s'\"(),;:]*"), "<tmp>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    # a number on its own ("boom 17", "line 3", "user_17"), not a digit that is part of a name ("Error2", "py3")
    (re.compile(r"(?<![A-Za-z0-9])\d+(?:\.\d+)?"), "N"),
)


# what producers put in the message attribute when the words are only in the text
# (jest-junit: "", gotestsum: "Failed")
_GENERIC_MESSAGES: Final = frozenset({"", "failed", "failure", "error"})
# go test's progress lines around its messages; stack frames end the error's own lines
_NOISE_LINE: Final = re.compile(r"\s*(?:=== (?:RUN|CONT|PAUSE|NAME)\b|--- (?:FAIL|PASS|SKIP):)")
_FRAME_LINE: Final = re.compile(r"\s+at |\s*File \"")
MESSAGE_LINES: Final = 5


def message_of(record: FailureRecord) -> str:
    """The failure's own words: its message, or, when the producer left that empty or generic,
    the error lines at the start of its text (up to the first stack frame, without go's progress lines)."""
    message = record.message.strip()
    if message.lower() not in _GENERIC_MESSAGES:
        return message
    lines: list[str] = []
    for line in record.text.splitlines():
        if _FRAME_LINE.match(line):
            break
        if line.strip() and not _NOISE_LINE.match(line):
            lines.append(line.strip())
        if len(lines) == MESSAGE_LINES:
            break
    return "\n".join(lines) or message


def normalise(message: str) -> str:
    """The message with what varies between runs and tests masked, whitespace collapsed."""
    text = " ".join(message.split())[:KEY_CHARS]
    for pattern, mask in _MASKS:
        text = pattern.sub(mask, text)
    return text


@dataclass(frozen=True)
class FailureGroup:
    """Failures that are the same failure; ``records`` in report order (the first is shown)."""

    records: tuple[FailureRecord, ...]

    @property
    def first(self) -> FailureRecord:
        return self.records[0]

    @property
    def count(self) -> int:
        return len(self.records)

    @property
    def shards(self) -> list[int]:
        return sorted({r.shard for r in self.records})


def group_failures(records: Iterable[FailureRecord], types: Mapping[str, str] | None = None) -> list[FailureGroup]:
    """Records grouped by (kind, exception type, normalised message). ``types`` maps a test id to
    its exception type where the report gave one (JUnit ``type``).

    Order: the largest groups first; among groups of one size, round-robin by the shard of their
    first failure (shard 1's first, shard 2's first, …, then shard 1's second), so a cut list is a
    fair sample of every shard. Ties keep report order."""
    types = types or {}
    members: dict[tuple[str, str, str], list[FailureRecord]] = {}
    for record in records:
        key = (record.kind.value, types.get(record.test_id, ""), normalise(message_of(record)))
        members.setdefault(key, []).append(record)
    groups = [FailureGroup(tuple(rs)) for rs in members.values()]
    rank: dict[int, int] = {}
    order = []
    for position, group in enumerate(groups):
        shard = group.first.shard
        order.append((-group.count, rank.get(shard, 0), shard, position))
        rank[shard] = rank.get(shard, 0) + 1
    return [groups[key[-1]] for key in sorted(order)]


def interleave(queues: Sequence[Sequence[T]], limit: int) -> list[T]:
    """At most ``limit`` items: the first of each queue, then the second of each, and so on."""
    sample: list[T] = []
    depth = 0
    while len(sample) < limit and any(depth < len(q) for q in queues):
        sample += [q[depth] for q in queues if depth < len(q)][: limit - len(sample)]
        depth += 1
    return sample


def round_robin(records: Sequence[FailureRecord], limit: int) -> list[FailureRecord]:
    """At most ``limit`` records, taken in turn from each shard (in shard order), each shard's in
    report order: a fair sample when not all can be shown."""
    by_shard: dict[int, list[FailureRecord]] = {}
    for record in records:
        by_shard.setdefault(record.shard, []).append(record)
    return interleave([by_shard[s] for s in sorted(by_shard)], limit)
