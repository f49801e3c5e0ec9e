"""How the contract files' values are read and written: required keys, whole numbers and seconds
checked with a ValueError in the file's words, seconds rounded as written, timestamps in RFC 3339."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from ci_shards.common.errors import as_written


def rfc3339(when: datetime) -> str:
    """A timestamp as written to files: UTC, whole seconds, ``Z`` (``2026-11-30T04:26:00Z``)."""
    return when.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def require(data: Mapping[str, Any], key: str) -> Any:
    if key not in data:
        msg = f"missing key {key!r}"
        raise ValueError(msg)
    return data[key]


def whole(data: Mapping[str, Any], key: str, default: Any = None) -> int:
    """``data[key]`` as an int, or a ValueError in the file's words (not Python's "int() argument ... NoneType")."""
    value = require(data, key) if default is None else data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().lstrip("-").isdigit():
        msg = f"{key!r} must be a whole number, not {as_written(value)}"
        raise ValueError(msg)
    return int(value)


def seconds(data: Mapping[str, Any], key: str) -> float:
    value = data.get(key, 0.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        msg = f"{key!r} must be a number of seconds, not {as_written(value)}"
        raise ValueError(msg)
    return float(value)


def optional_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        msg = f"{key!r} must be a string"
        raise ValueError(msg)
    return value


def round_seconds(value: float) -> float:
    """Seconds as written to files: 3 decimals, so plans are byte-stable across platforms."""
    return round(float(value), 3)
