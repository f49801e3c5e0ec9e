"""The quarantine list of the config: tests that still run but whose failures do not fail the build.

Each entry names a test id or a glob (fnmatch on the id or its file, as ``weights`` match), says why,
and may expire (``YYYY-MM-DD``, valid through that day in UTC). An expired entry fails the verdict
with a message naming it, so a quarantine cannot be forgotten (docs/configuration.md).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from ci_shards.common.errors import ConfigError, as_written
from ci_shards.model.matching import item_file


@dataclass(frozen=True, kw_only=True)
class QuarantineEntry:
    test: str  # a test id or a glob
    reason: str
    expires: date | None = None

    def matches(self, test_id: str) -> bool:
        return fnmatch.fnmatchcase(test_id, self.test) or fnmatch.fnmatchcase(item_file(test_id), self.test)

    def expired(self, today: date) -> bool:
        return self.expires is not None and today > self.expires

    def describe(self) -> str:
        until = f", expires {self.expires.isoformat()}" if self.expires else ""
        return f"'{self.test}' (reason: {self.reason}{until})"


def parse_quarantine(source: str, value: Any) -> tuple[QuarantineEntry, ...]:
    """``quarantine:`` of the config: a list of ``{test, reason, expires?}`` mappings."""
    if not isinstance(value, list):
        msg = f"{source}: 'quarantine' must be a list of {{test, reason, expires}} entries, not {as_written(value)}"
        raise ConfigError(msg)
    return tuple(_entry(source, position, raw) for position, raw in enumerate(value, 1))


def _entry(source: str, position: int, raw: Any) -> QuarantineEntry:
    where = f"{source}: quarantine entry {position}"
    if not isinstance(raw, Mapping):
        msg = f"{where} must be a mapping with 'test' and 'reason', not {as_written(raw)}"
        raise ConfigError(msg)
    unknown = sorted(str(k) for k in raw if k not in ("test", "reason", "expires"))
    if unknown:
        msg = f"{where}: unknown key {unknown[0]!r} (allowed: test, reason, expires)"
        raise ConfigError(msg)
    test, reason = raw.get("test"), raw.get("reason")
    for key, text in (("test", test), ("reason", reason)):
        if not isinstance(text, str) or not text.strip():
            msg = f"{where}: {key!r} must be a non-empty string, not {as_written(text)}"
            raise ConfigError(msg)
    return QuarantineEntry(test=str(test), reason=str(reason).strip(), expires=_expiry(where, raw.get("expires")))


def _expiry(where: str, value: Any) -> date | None:
    if value is None:
        return None
    if isinstance(value, date):  # YAML reads an unquoted 2026-12-31 as a date already
        return value
    text = str(value)
    if len(text) == 10:
        try:
            return date.fromisoformat(text)
        except ValueError:
            pass
    msg = f"{where}: 'expires' must be a date YYYY-MM-DD, not {as_written(value)}"
    raise ConfigError(msg)


def entry_for(test_id: str, entries: Sequence[QuarantineEntry], today: date) -> QuarantineEntry | None:
    """The first entry in force (not expired) that matches ``test_id``."""
    return next((e for e in entries if not e.expired(today) and e.matches(test_id)), None)


def expired_messages(entries: Sequence[QuarantineEntry], today: date, source: str) -> list[str]:
    return [
        f"quarantine entry {e.test!r} in {source or 'the config'} expired on {e.expires} (reason was: {e.reason}): "
        "fix the test and remove the entry, or extend 'expires'"
        for e in entries
        if e.expired(today)
    ]
