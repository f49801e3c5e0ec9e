"""Test ids recorded by a per-test coverage map, and which planned items they speak for. Pure.

A planned item and a recorded context are related when one covers the other the way pytest's ids do
(``model.matching.item_candidates``): the item ``f.py`` or ``f.py::t`` covers the recorded ``f.py::t[1]``, and the
recorded file context ``f.py`` (what module- and class-scoped fixtures ran, for every test of the file)
covers every item of that file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ci_shards.model.matching import item_candidates


@dataclass(frozen=True)
class RecordedTests:
    """A set of recorded contexts (test node ids, or test files), asked about planned items."""

    ids: frozenset[str]
    covering: frozenset[str]  # every item that covers one of ``ids`` (``ids`` included)

    @classmethod
    def of(cls, ids: Iterable[str]) -> RecordedTests:
        found = frozenset(ids)
        return cls(ids=found, covering=frozenset(c for i in found for c in item_candidates(i)))

    def speak_for(self, item: str) -> bool:
        """A recorded context is ``item``, lies inside it, or holds it (a file context holds its file's items)."""
        return item in self.covering or any(c in self.ids for c in item_candidates(item))

    def __or__(self, other: RecordedTests) -> RecordedTests:
        return RecordedTests(ids=self.ids | other.ids, covering=self.covering | other.covering)
