"""The timings store: reading every durations format, robust estimates, history, write-back.

Reads pytest-split's ``.test_durations`` (the ``{nodeid: seconds}`` object and its older
``[[nodeid, seconds], ...]`` list), JUnit XML (``time`` per testcase, via ``ci_shards.junit``) and
ci-shards' own store (``docs/timings-store.md``): per variant, per item, the last
``HISTORY`` samples, so an estimate is the median of recent runs rather than last-run-wins.

Parsing is separated from file reading (``parse_timings_text``) so it can be tested on strings.
Values that are not usable durations (negative, NaN, infinite, not a number) are skipped and
counted in ``TimingsStore.warnings``; a file that is not JSON/XML at all is an ``InputError``
naming the file and the position.
"""

from __future__ import annotations

import codecs
import dataclasses
import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ci_shards.common import json_text, outfile
from ci_shards.common.errors import InputError, kind_of
from ci_shards.common.json_text import indented
from ci_shards.junit import parse_junit_bytes
from ci_shards.model.outcome import MAX_TEST_SECONDS, seconds_by_file, usable_seconds

STORE_SCHEMA: Final = "ci-shards/timings@1"
HISTORY: Final = 5  # samples kept per item and variant (docs/timings-store.md)
DEFAULT_VARIANT: Final = ""  # the variant key used when no variant is given

Samples = tuple[float, ...]


def _median(samples: Samples) -> float:
    """``statistics.median`` of the samples, as a float; of one sample (a durations file's), that sample."""
    return float(samples[0]) if len(samples) == 1 else float(statistics.median(samples))


@dataclass(frozen=True)
class TimingsStore:
    """Per variant, per item: the most recent samples (oldest first), at most ``HISTORY`` of them.

    ``warnings`` describes what reading skipped (bad values, duplicate keys); it is not part of the
    stored file and not part of equality.
    """

    variants: Mapping[str, Mapping[str, Samples]] = field(default_factory=dict)
    warnings: tuple[str, ...] = field(default=(), compare=False)
    # what reading found with no usable duration (negative, NaN, over a day): not stored, but ``plan
    # --from-timings`` still plans them (estimated as unknown), or they would run in no shard
    unusable: tuple[str, ...] = field(default=(), compare=False)
    # per variant, each recent run's per-shard fixed overhead (docs/timings-store.md), oldest first
    overhead: Mapping[str, Samples] = field(default_factory=dict)
    # per variant, each recent run's overhead per test (report/overhead.py), oldest first
    test_overhead: Mapping[str, Samples] = field(default_factory=dict)
    # per variant, per test file, each recent run's seconds to collect it (outcome.json's collect_seconds)
    collection: Mapping[str, Mapping[str, Samples]] = field(default_factory=dict)
    # variant → its estimates, worked out once: a plan asks twice (is the file usable, then the numbers), and
    # over 100,000 items that was a tenth of a second each time (issue 21). The store is frozen, so they stay true.
    _estimates: dict[str | None, dict[str, float]] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def items(self) -> list[str]:
        """Every item with at least one sample in any variant, sorted."""
        return sorted({item for samples in self.variants.values() for item in samples})

    def __len__(self) -> int:
        return len(self.items)

    def estimates(self, variant: str | None = None) -> dict[str, float]:
        """Item → seconds: the median of the item's recent samples in ``variant``.

        An item with no samples in ``variant`` falls back to the median of its samples in all other
        variants together (e.g. a new ``macos-py3.13`` job borrows the Linux numbers).
        """
        if variant not in self._estimates:
            self._estimates[variant] = self._work_out_estimates(variant)
        return dict(self._estimates[variant])  # a copy: the caller may change it, the store's stay as they are

    def _work_out_estimates(self, variant: str | None) -> dict[str, float]:
        return _medians(self.variants, DEFAULT_VARIANT if variant is None else variant)

    def record(
        self, samples: Mapping[str, float], *, variant: str | None = None, known: Mapping[str, float] | None = None
    ) -> TimingsStore:
        """A new store with one more sample per item of ``samples`` (unusable values are skipped).

        ``known`` are tests that were reported but whose time says nothing about their cost (skipped:
        a setup and teardown of ~0 s). Each becomes a first sample only when the store has none for it
        in any variant, so the next plan knows the test (pytest-split records skipped tests too) and
        never lists it as new; a test that has run before keeps its history untouched, so a skip in
        one run (a missing optional dependency, a platform ``skipif``) never pulls its median down."""
        key = DEFAULT_VARIANT if variant is None else variant
        variants = {name: dict(items) for name, items in self.variants.items()}
        target = variants.setdefault(key, {})
        if known:
            have = set(self.items) | set(samples)
            for item in sorted(known):
                value = usable_seconds(known[item])
                if item not in have and value is not None:
                    target[item] = (value,)
        skipped: list[str] = []
        for item in sorted(samples):
            value = usable_seconds(samples[item])
            if value is None:
                skipped.append(item)
                continue
            target[item] = (*target.get(item, ()), value)[-HISTORY:]
        warnings = self.warnings
        if skipped:
            warnings = (
                *warnings,
                f"skipped {len(skipped)} unusable duration(s) (negative, NaN, over a day or not a number)",
            )
        unusable = (*self.unusable, *skipped)
        return dataclasses.replace(self, variants=variants, warnings=warnings, unusable=unusable)

    def record_overhead(
        self, seconds: float, *, per_test: float | None = None, variant: str | None = None
    ) -> TimingsStore:
        """A new store with one more per-shard overhead sample (one per run) in ``variant``, and one
        more per-test overhead sample when the run could tell it."""
        value = usable_seconds(seconds)
        if value is None:
            return self
        key = DEFAULT_VARIANT if variant is None else variant
        store = dataclasses.replace(self, overhead=_appended(self.overhead, key, value))
        per_test_value = usable_seconds(per_test)
        if per_test_value is None:
            return store
        return dataclasses.replace(store, test_overhead=_appended(self.test_overhead, key, per_test_value))

    def record_collection(self, seconds: Mapping[str, float], *, variant: str | None = None) -> TimingsStore:
        """A new store with one more collection sample per test file of ``seconds`` (unusable ones skipped)."""
        usable = seconds_by_file(seconds)
        if not usable:
            return self
        key = DEFAULT_VARIANT if variant is None else variant
        files = dict(self.collection.get(key, {}))
        for file in sorted(usable):
            files[file] = (*files.get(file, ()), usable[file])[-HISTORY:]
        return dataclasses.replace(self, collection={**self.collection, key: files})

    def collection_estimates(self, variant: str | None = None) -> dict[str, float]:
        """Test file → seconds to collect it: the median of its recent samples in ``variant``, else of
        every variant's together (as ``estimates``)."""
        return _medians(self.collection, DEFAULT_VARIANT if variant is None else variant)

    def overhead_estimate(self, variant: str | None = None) -> tuple[float, int] | None:
        """(seconds, runs): the median per-shard overhead of the recent runs in ``variant``, else of
        all variants together; None when no run recorded one."""
        return _learned(self.overhead, variant)

    def test_overhead_estimate(self, variant: str | None = None) -> tuple[float, int] | None:
        """(seconds, runs): the median per-test overhead of the recent runs, as ``overhead_estimate``."""
        return _learned(self.test_overhead, variant)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "schema": STORE_SCHEMA,
            "history": HISTORY,
            "variants": {
                name: {item: [round(s, 6) for s in samples] for item, samples in sorted(items.items())}
                for name, items in sorted(self.variants.items())
                if items
            },
        }
        for name, learned in (("overhead", self.overhead), ("test_overhead", self.test_overhead)):
            if learned:  # optional within version 1: stores without them read as before
                data[name] = {variant: [round(s, 6) for s in samples] for variant, samples in sorted(learned.items())}
        if any(self.collection.values()):
            data["collection"] = {
                name: {file: [round(s, 6) for s in samples] for file, samples in sorted(files.items())}
                for name, files in sorted(self.collection.items())
                if files
            }
        return data

    def dumps(self, sections: Mapping[str, Any] | None = None) -> str:
        """The store file's bytes: sorted keys, one item per line (small diffs), trailing newline.
        ``sections``: further top-level keys kept by others, e.g. the test history (``history/outcomes.py``)."""
        data = {**(sections or {}), **self.to_json()}
        return indented(data, 1) + "\n"


def _medians(per_variant: Mapping[str, Mapping[str, Samples]], key: str) -> dict[str, float]:
    """Key → the median of its samples in variant ``key``, else of every other variant's together, sorted by key."""
    own = per_variant.get(key, {})
    if per_variant.keys() <= {key}:  # one variant (a durations file, most stores): nothing to pool
        return {item: _median(own[item]) for item in sorted(own) if own[item]}
    result: dict[str, float] = {}
    pooled: dict[str, list[float]] = {}
    for name in sorted(per_variant):
        if name == key:
            continue
        for item, samples in per_variant[name].items():
            pooled.setdefault(item, []).extend(samples)
    for item in sorted({item for samples in per_variant.values() for item in samples}):
        chosen: Sequence[float] = own.get(item) or pooled.get(item) or ()
        if chosen:
            result[item] = float(statistics.median(chosen))
    return result


def merge_stores(stores: Iterable[TimingsStore]) -> TimingsStore:
    """One store holding every sample of ``stores``: histories are concatenated in argument order
    (later stores count as more recent) and cut to the last ``HISTORY`` samples."""
    given = list(stores)
    if len(given) == 1 and _within_history(given[0]):  # one store (a plan's usual case): it is its own merge
        only = given[0]
        return TimingsStore(
            variants=only.variants,
            warnings=only.warnings,
            overhead=only.overhead,
            test_overhead=only.test_overhead,
            collection=only.collection,
        )
    variants: dict[str, dict[str, Samples]] = {}
    collection: dict[str, dict[str, Samples]] = {}
    overhead: dict[str, Samples] = {}
    test_overhead: dict[str, Samples] = {}
    warnings: list[str] = []
    for store in given:
        warnings.extend(store.warnings)
        _merge_samples(variants, store.variants)
        _merge_samples(collection, store.collection)
        for merged, learned in ((overhead, store.overhead), (test_overhead, store.test_overhead)):
            for name, samples in learned.items():
                merged[name] = (*merged.get(name, ()), *samples)[-HISTORY:]
    return TimingsStore(
        variants=variants,
        warnings=tuple(warnings),
        overhead=overhead,
        test_overhead=test_overhead,
        collection=collection,
    )


def _merge_samples(into: dict[str, dict[str, Samples]], more: Mapping[str, Mapping[str, Samples]]) -> None:
    """``more``'s samples appended after ``into``'s, per variant and key, cut to the last ``HISTORY``."""
    for name, items in more.items():
        target = into.setdefault(name, {})
        for item, samples in items.items():
            earlier = target.get(item)
            target[item] = tuple(samples)[-HISTORY:] if earlier is None else (*earlier, *samples)[-HISTORY:]


def _within_history(store: TimingsStore) -> bool:
    """No history in ``store`` longer than ``HISTORY`` samples: merging it alone would cut nothing."""
    histories = [*store.overhead.values(), *store.test_overhead.values()]
    per_key = (s for kind in (store.variants, store.collection) for items in kind.values() for s in items.values())
    return all(len(s) <= HISTORY for s in histories) and all(len(s) <= HISTORY for s in per_key)


def _appended(learned: Mapping[str, Samples], variant: str, value: float) -> dict[str, Samples]:
    return {**learned, variant: (*learned.get(variant, ()), value)[-HISTORY:]}


def _learned(learned: Mapping[str, Samples], variant: str | None) -> tuple[float, int] | None:
    """(median, runs) of ``variant``'s samples, else of every variant's together; None without any."""
    key = DEFAULT_VARIANT if variant is None else variant
    samples = learned.get(key) or tuple(s for name in sorted(learned) for s in learned[name])
    return (float(statistics.median(samples)), len(samples)) if samples else None


# --------------------------------------------------------------------------------------------
# reading


def _from_pairs(pairs: Iterable[tuple[str, object]], source: str, what: str) -> TimingsStore:
    values: dict[str, float] = {}
    unusable: list[str] = []
    duplicates = nested = 0
    for item, raw in pairs:
        # a plain float in range is usable as it is (NaN and infinities fail the comparison): no call per value
        value = raw if type(raw) is float and 0.0 <= raw <= MAX_TEST_SECONDS else usable_seconds(raw)
        if value is None:
            unusable.append(item)
            nested += isinstance(raw, dict)  # a [1] stays a skipped value (issue 2); an object is a section
            continue
        if item in values:
            duplicates += 1  # pytest-split reads these with json.load: the last value wins
        values[item] = value
    if nested:  # durations are numbers: e.g. a ci-shards store that lost its "schema" line, not a silent "no timings"
        shape = f"{nested} of its values are objects, not seconds"
        msg = f"not a {what}: {shape} (a ci-shards store without its 'schema'?)"
        raise InputError(source, msg)
    warnings = []
    if unusable:
        warnings.append(
            f"{source}: skipped {len(unusable)} unusable duration(s) in the {what} (negative, NaN, over a day or not"
            " a number)"
        )
    if duplicates:
        warnings.append(f"{source}: {duplicates} item(s) appear more than once; the last value is used")
    # what TimingsStore().record(values) holds, without checking every value a second time: one sample each
    variants = {DEFAULT_VARIANT: {item: (values[item],) for item in sorted(values)}}
    return TimingsStore(variants=variants, warnings=tuple(warnings), unusable=tuple(unusable))


def _own_store(data: Mapping[str, Any], source: str) -> TimingsStore:
    schema = data.get("schema")
    if schema != STORE_SCHEMA:
        raise InputError(source, f"unsupported timings store schema {schema!r} (this version reads {STORE_SCHEMA!r})")
    raw_variants = data.get("variants", {})
    if not isinstance(raw_variants, dict):
        raise InputError(source, "'variants' must be an object of {variant: {item: [seconds, ...]}}")
    variants: dict[str, dict[str, Samples]] = {}
    bad = 0
    for name, items in raw_variants.items():
        if not isinstance(items, dict):
            raise InputError(source, f"variant {name!r} must be an object of {{item: [seconds, ...]}}")
        variants[str(name)], bad_here = _sample_lists(items)
        bad += bad_here
    learned: dict[str, dict[str, Samples]] = {}
    for name in ("overhead", "test_overhead"):  # optional: per variant, one sample per run
        raw = data.get(name, {})
        if not isinstance(raw, dict):
            raise InputError(source, f"{name!r} must be an object of {{variant: [seconds, ...]}}")
        learned[name], bad_here = _sample_lists(raw)
        bad += bad_here
    collection, bad_here = _collection(data.get("collection", {}), source)
    bad += bad_here
    warnings = (f"{source}: skipped {bad} unusable sample(s)",) if bad else ()
    return TimingsStore(
        variants=variants,
        warnings=warnings,
        overhead=learned["overhead"],
        test_overhead=learned["test_overhead"],
        collection=collection,
    )


def _collection(raw: object, source: str) -> tuple[dict[str, dict[str, Samples]], int]:
    """The optional ``collection`` section: per variant, per test file, its recent collection seconds."""
    if not isinstance(raw, dict) or not all(isinstance(files, dict) for files in raw.values()):
        raise InputError(source, "'collection' must be an object of {variant: {file: [seconds, ...]}}")
    result: dict[str, dict[str, Samples]] = {}
    bad = 0
    for name, files in raw.items():
        result[str(name)], bad_here = _sample_lists(files)
        bad += bad_here
    return result, bad


def _sample_lists(raw: Mapping[str, object]) -> tuple[dict[str, Samples], int]:
    """``{key: [seconds, ...]}`` → the usable samples per key (the last ``HISTORY``) and how many
    samples (or non-list values) were not usable."""
    result: dict[str, Samples] = {}
    bad = 0
    for key, samples in raw.items():
        if not isinstance(samples, list):
            bad += 1
            continue
        good = tuple(v for v in (usable_seconds(s) for s in samples) if v is not None)
        bad += len(samples) - len(good)
        if good:
            result[str(key)] = good[-HISTORY:]
    return result, bad


def _keep_pairs(pairs: list[tuple[str, Any]]) -> Any:
    return _PairList(pairs)


class _PairList(list):  # type: ignore[type-arg]
    """A JSON object kept as its (key, value) pairs, so duplicate keys can be counted."""


def _plain(value: Any) -> Any:
    if isinstance(value, _PairList):
        return {k: _plain(v) for k, v in value}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def parse_timings_text(data: bytes, source: str, *, junit: bool = False) -> TimingsStore:
    """Auto-detect the format of ``data`` (``source`` names it in errors and warnings); ``junit``:
    it was given as a JUnit report, so it is read as XML whatever it starts with."""
    # a byte-order mark is not content: .NET writes UTF-8 reports with one; UTF-16 is XML's
    # (JSON is UTF-8 only, RFC 8259 section 8.1)
    utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    head = data.removeprefix(codecs.BOM_UTF8).lstrip()[:1]
    if junit or utf16 or head == b"<":
        cases = parse_junit_bytes(data, source)
        return _from_junit_cases(((c.test_id, math.nan if c.time_invalid else c.time) for c in cases), source)
    if not head:
        raise InputError(source, "empty file (expected a durations JSON object, a list of pairs or JUnit XML)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(source, f"not UTF-8 text (byte {err.start})") from None
    try:
        parsed = json_text.loads(text, object_pairs_hook=_keep_pairs)
    except json.JSONDecodeError as err:
        raise InputError(source, f"not valid JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
    if isinstance(parsed, _PairList):
        schema = next((v for k, v in parsed if k == "schema"), None)
        if isinstance(schema, str) and schema.startswith("ci-shards/"):
            return _own_store(_plain(parsed), source)
        pairs = [(k, _plain(v)) for k, v in parsed]
        return _from_pairs(pairs, source, "durations object")
    if isinstance(parsed, list):
        pairs = []
        for position, entry in enumerate(parsed):
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
                raise InputError(source, f"entry {position} is not a [nodeid, seconds] pair")
            pairs.append((entry[0], entry[1]))
        return _from_pairs(pairs, source, "list of pairs")
    raise InputError(source, f"expected a JSON object or list of durations, found {kind_of(parsed)}")


def _from_junit_cases(cases: Iterable[tuple[str, float]], source: str) -> TimingsStore:
    # A test id that occurs twice in one report ran twice in that job (re-runs, repeated suites):
    # the item costs the sum, which is what the shard will spend on it.
    values: dict[str, float] = {}
    for test_id, seconds in cases:
        values[test_id] = values.get(test_id, 0.0) + seconds
    return TimingsStore().record(values)


def load_timings(path: str | Path, *, junit: bool = False) -> TimingsStore:
    """Read one timings file in any supported format (``junit``: a JUnit report, whatever it looks like)."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise InputError(path, f"cannot read timings: {err.strerror or err}") from None
    return parse_timings_text(data, str(path), junit=junit)


def write_store(store: TimingsStore, path: str | Path, sections: Mapping[str, Any] | None = None) -> None:
    """Write atomically (``outfile.atomic``) so a killed job never leaves half a store."""
    outfile.write_atomic(path, store.dumps(sections))
