"""Estimating items: known timings, unknown items from their file's or the suite's median, weights. Pure.

Also matching ids to timings recorded under another root (a durations file written inside the
package, a plan made at the repository root): ``rebase_keys`` for an explicit ``--durations-root``,
``match_by_suffix`` for the longest common path suffix, unambiguous matches only.
"""

from __future__ import annotations

import fnmatch
import itertools
import math
import posixpath
import statistics
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ci_shards.common.console import plural
from ci_shards.common.errors import UsageError
from ci_shards.model.matching import item_candidates, item_file, owning_item

DEFAULT_UNKNOWN_SECONDS: Final = 1.0  # when nothing at all is known (pytest-split uses 1 as well)


@dataclass(frozen=True)
class Estimates:
    seconds: dict[str, float]
    unknown: int
    note: str


def estimate(
    items: Sequence[str], durations: Mapping[str, float], unknown_factors: Mapping[str, float] | None = None
) -> Estimates:
    """Seconds per item; an unknown item gets the median of its file's known items, else of all
    known items, else ``DEFAULT_UNKNOWN_SECONDS`` — never zero, and counted — times its factor in
    ``unknown_factors`` (what its file's text says it costs in tests: ``plan.first_weights``)."""
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
        if unknown_factors:
            seconds[item] *= unknown_factors.get(item, 1.0)
    unknown = from_file + from_all
    note = ""
    if unknown:
        source = "all known items" if known else f"a default of {DEFAULT_UNKNOWN_SECONDS:g} s (no timings at all)"
        note = (
            f"{unknown} of {len(items)} items had no timing: estimated as the median of their file's known items"
            f" ({from_file}) or of {source} ({from_all})"
        )
    return Estimates(seconds, unknown, note)


def outermost_keys(
    timings: Mapping[str, float], untimed: Collection[str] = ()
) -> tuple[list[str], dict[str, float], str]:
    """``--from-timings``' items, sorted: the keys no other key covers; the estimates folding changed, each covering
    key's at the larger of its own timing and the sum of the keys it covers; and a note of how many were folded.

    A pytest-split file keeps every id it ever measured, so a test that became parametrized is there as
    ``f.py::t`` beside ``f.py::t[a]`` (and a store may hold a file beside its tests). pytest runs ``f.py::t``
    with all of its cases: planned as two items in two shards, ``f.py::t[a]`` would run in both. The covered
    keys' seconds are what running the covering item costs now; its own timing may be the older reading, so
    the larger of the two is kept (never an underestimate). ``untimed`` (ids read with no usable duration:
    negative, NaN, over a day) are items too, without an estimate unless they cover others, so ``estimate``
    says so: dropped, those tests would run in no shard."""
    keys = sorted({*timings, *untimed}) if untimed else sorted(timings)
    outer_of = _outermost_covers(keys)
    if not outer_of:  # the common case, 100,000 timings on the plan path: nothing copied
        return keys, {}, ""
    covered: dict[str, float] = {}
    for key, outer in outer_of.items():
        covered[outer] = covered.get(outer, 0.0) + timings.get(key, 0.0)
    items = [k for k in keys if k not in outer_of]
    note = (
        f"{plural(len(outer_of), 'timing')} of ids another timing's id covers planned under it"
        f" ({plural(len(covered), 'item')}: pytest runs `f.py::t` with every `f.py::t[…]`, so each runs once)"
    )
    return items, {k: max(timings.get(k, 0.0), inner) for k, inner in covered.items()}, note


def _outermost_covers(keys: Sequence[str]) -> dict[str, str]:
    """{key: the outermost other key that covers it (``model.matching.item_candidates``)} for ``keys`` sorted.

    Not a candidates list per key (100,000 timings: the plan path's budget, issue 21): a key that covers others
    is a prefix of them, and every key that starts with it sorts in one run right after it, so only a key that is
    a prefix of the next one is looked at, over its run; a shorter prefix sorts first and claims a key first."""
    outer_of: dict[str, str] = {}
    starts = [index for index, (key, after) in enumerate(itertools.pairwise(keys)) if after.startswith(key)]
    for index in starts:
        key, run = keys[index], index + 1
        while run < len(keys) and keys[run].startswith(key):
            inner = keys[run]
            if inner[len(key)] in ":[" and inner not in outer_of and key in item_candidates(inner):
                outer_of[inner] = key
            run += 1
    return outer_of


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


def match_timings(
    items: Sequence[str], estimates: Mapping[str, float], *, allow_unmatched: bool
) -> tuple[dict[str, float], str]:
    """When most items have no timing but the timings have about as many keys, they were likely
    recorded under another root: match by the longest common path suffix (unambiguous only) and say
    so in the returned note. Still under half matched: a ``UsageError`` unless ``allow_unmatched``.

    An item counts as matched when it owns a key (``model.matching.owning_item``): its own id, or a file or
    class item covering measured tests."""
    result = dict(estimates)
    planned = set(items)
    # a key that is itself planned owns itself (owning_item's first candidate): one set lookup, not its candidates
    owners = {key: key if key in planned else owning_item(key, planned) for key in estimates}
    covered = set(owners.values())
    unmatched = [i for i in items if i not in covered]
    if not estimates or len(unmatched) * 2 <= len(items) or len(estimates) * 2 < len(items):
        return result, ""
    matches = match_by_suffix(unmatched, [key for key, owner in owners.items() if owner is None])
    result.update({item: estimates[key] for item, key in matches.items()})
    matched = len(items) - len(unmatched) + len(matches)
    if matched * 2 < len(items) and not allow_unmatched:
        msg = (
            f"only {matched} of {len(items)} items match a timing, even by path suffix (recorded under another"
            " root?): pass --durations-root DIR (the folder the timings' ids are relative to), or"
            " --allow-unmatched-timings"
        )
        raise UsageError(msg)
    note = ""
    if matches:
        note = (
            f"{len(matches)} of {len(items)} items had no timing under their own id and were matched to one recorded"
            f" under another root by their longest common path suffix: {describe_suffix_matches(matches)}"
        )
    return result, note


def _split(item_id: str) -> tuple[list[str], str]:
    """Path parts of the id's file and the rest after the first ``::`` (kept whole)."""
    file, sep, rest = item_id.partition("::")
    return file.split("/"), sep + rest


def _common_suffix(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def match_by_suffix(items: Sequence[str], keys: Collection[str]) -> dict[str, str]:
    """Item → timings key for items without a timing of their own, by the longest common path suffix.

    A key is a candidate when everything after its file (``::Class::test[param]``) and at least the
    file name are equal. An item is matched only when one candidate has the longest common suffix
    (a tie is ambiguous: no match), and a key only when one item chose it and no item has it as its
    own id: never two ids to one key.
    """
    own = set(items) & set(keys)
    by_name: dict[tuple[str, str], list[tuple[list[str], str]]] = {}
    for key in keys:
        if key not in own:
            parts, rest = _split(key)
            by_name.setdefault((rest, parts[-1]), []).append((parts, key))
    chosen: dict[str, str] = {}
    for item in items:
        if item in own:
            continue
        parts, rest = _split(item)
        scored = sorted(((_common_suffix(parts, p), k) for p, k in by_name.get((rest, parts[-1]), ())), reverse=True)
        if scored and (len(scored) == 1 or scored[0][0] > scored[1][0]):
            chosen[item] = scored[0][1]
    uses = Counter(chosen.values())
    return {item: key for item, key in chosen.items() if uses[key] == 1}


def describe_suffix_matches(matches: Mapping[str, str]) -> str:
    """How ids and keys differ, most common first: ``ids 'pkg/…' ↔ timings '…'``."""
    shifts: Counter[tuple[str, str]] = Counter()
    for item, key in matches.items():
        item_parts, key_parts = _split(item)[0], _split(key)[0]
        common = _common_suffix(item_parts, key_parts)
        shifts["/".join(item_parts[: len(item_parts) - common]), "/".join(key_parts[: len(key_parts) - common])] += 1
    return ", ".join(
        f"ids '{_prefix(i)}…' ↔ timings '{_prefix(k)}…' ({n})"
        for (i, k), n in sorted(shifts.items(), key=_by_count)[:3]
    )


def _prefix(path: str) -> str:
    return f"{path}/" if path else ""


def _by_count(entry: tuple[tuple[str, str], int]) -> tuple[int, tuple[str, str]]:
    return -entry[1], entry[0]


def rebase_keys(durations: Mapping[str, float], *, durations_root: str, ids_root: str) -> dict[str, float]:
    """Timings keys relative to ``durations_root`` made relative to ``ids_root`` (both paths from the same
    working directory): ``--durations-root pkg`` turns ``tests/t.py::x`` into ``pkg/tests/t.py::x``."""
    rebased: dict[str, float] = {}
    for key, seconds in durations.items():
        file, sep, rest = key.partition("::")
        path = posixpath.relpath(posixpath.normpath(posixpath.join(durations_root, file)), ids_root)
        rebased.setdefault(path + sep + rest, seconds)
    return rebased


def measured_ratio(shards: Sequence[Sequence[str]], measured: Mapping[str, float]) -> float | None:
    """Slowest shard over the lower bound, counting only measured seconds (unweighted); None without any."""
    sums = [sum(measured.get(i, 0.0) for i in shard) for shard in shards]
    total = sum(sums)
    if not shards or total <= 0:
        return None
    longest = max((measured[i] for shard in shards for i in shard if i in measured), default=0.0)
    return max(sums) / max(total / len(shards), longest)
