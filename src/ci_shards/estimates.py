"""Estimating items: known timings, unknown items from their file's or the suite's median, weights. Pure."""

from __future__ import annotations

import fnmatch
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ci_shards.errors import UsageError
from ci_shards.model import item_file

DEFAULT_UNKNOWN_SECONDS: Final = 1.0  # when nothing at all is known (pytest-split uses 1 as well)


@dataclass(frozen=True)
class Estimates:
    seconds: dict[str, float]
    unknown: int
    note: str


def estimate(items: Sequence[str], durations: Mapping[str, float]) -> Estimates:
    """Seconds per item; an unknown item gets the median of its file's known items, else of all
    known items, else ``DEFAULT_UNKNOWN_SECONDS`` — never zero, and counted."""
    known = {i: float(durations[i]) for i in items if i in durations}
    if len(known) == len(items):  # everything measured (the common case): nothing to estimate
        return Estimates(known, 0, "")
    by_file: dict[str, list[float]] = {}
    for item, value in known.items():
        by_file.setdefault(item_file(item), []).append(value)
    everything = statistics.median(known.values()) if known else DEFAULT_UNKNOWN_SECONDS
    from_file = from_all = 0
    seconds = dict(known)
    for item in items:
        if item in known:
            continue
        siblings = by_file.get(item_file(item))
        if siblings:
            seconds[item] = statistics.median(siblings)
            from_file += 1
        else:
            seconds[item] = everything
            from_all += 1
    unknown = from_file + from_all
    note = ""
    if unknown:
        source = "all known items" if known else f"a default of {DEFAULT_UNKNOWN_SECONDS:g} s (no timings at all)"
        note = (
            f"{unknown} of {len(items)} items had no timing: estimated as the median of their file's known items"
            f" ({from_file}) or of {source} ({from_all})"
        )
    return Estimates(seconds, unknown, note)


def apply_weights(seconds: Mapping[str, float], weights: Mapping[str, float]) -> dict[str, float]:
    """Multiply by the factor of every pattern (fnmatch on the item id or its file) the item matches."""
    result = dict(seconds)
    for pattern in sorted(weights):
        factor = weights[pattern]
        if not (math.isfinite(factor) and factor > 0):
            msg = f"weight for {pattern!r} must be a positive number, not {factor!r}"
            raise UsageError(msg)
        for item in result:
            if fnmatch.fnmatchcase(item, pattern) or fnmatch.fnmatchcase(item_file(item), pattern):
                result[item] *= factor
    return result
