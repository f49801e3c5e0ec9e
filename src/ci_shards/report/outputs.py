"""Files the aggregate stage writes: merged JUnit, all failures, the verdict JSON, the timings
write-back, and the job summary (appended, never overwritten: GITHUB_STEP_SUMMARY is shared by
every step of the job)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ci_shards.common import outfile
from ci_shards.common.console import plural
from ci_shards.common.errors import InputError
from ci_shards.junit import write_junit_suites
from ci_shards.model.failures import dumps_jsonl
from ci_shards.model.outcome import MAX_TEST_SECONDS, in_pytests_junit
from ci_shards.plan.workers import overhead_variant
from ci_shards.report.aggregate import Verdict
from ci_shards.report.overhead import critical_path_tests, per_test_overhead, run_overhead, shard_overheads
from ci_shards.timings.store import TimingsStore, load_timings, write_store

VERDICT_SCHEMA: Final = "ci-shards/verdict@1"
JUNIT_SUMMARY_SCHEMA: Final = "ci-shards/junit-summary@1"


def write_text(path: Path, text: str) -> None:
    outfile.write_atomic(path, text)


def write_merged_junit(verdict: Verdict, path: Path) -> None:
    """One suite per shard, one testcase per logical test, counts recounted. What pytest's own --junitxml
    would not write (a planned file without tests, one the project's rules leave out, deselected tests) stays
    in the shards' junit.xml, where it accounts for the plan, and out of this report, which a test reporter
    counts: 537 tests and 16 skipped where pytest said 528 and 4 (django-extensions 4.1, discovery plan)."""
    suites = [(f"shard-{s.index}-of-{verdict.total_shards}", [c for c in s.cases if in_pytests_junit(c)])
              for s in verdict.shards]  # fmt: skip
    write_junit_suites(suites, path, name="ci-shards")  # atomic; an OSError is an InputError naming path


def write_failures(verdict: Verdict, path: Path) -> None:
    write_text(path, dumps_jsonl(verdict.failures))


def append_summary(text: str, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
    except OSError as err:
        raise InputError(path, f"cannot append the job summary: {err.strerror or err}") from None


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    t = verdict.totals
    acc = verdict.accounting
    return {
        "schema": VERDICT_SCHEMA,
        "passed": verdict.passed,
        "exit_code": verdict.exit_code,
        "reasons": list(verdict.reasons),
        "plan_digest": verdict.plan_digest,
        "totals": t.to_json(),
        "shards": [
            {
                "index": s.index,
                "status": s.status.value,
                "reason": s.reason,
                "tests": s.totals.tests,
                "failed": s.totals.failed + s.totals.errors,
                "flaky": s.totals.flaky,
                "elapsed_seconds": round(s.elapsed_seconds, 3),
                "estimated_seconds": round(s.estimated_seconds, 3),
                "source": s.source,
                "notes": list(s.notes),
                "verified": s.verified,
            }
            for s in verdict.shards
        ],
        "accounting": {
            "unit": acc.unit,
            "planned": acc.planned,
            "missing": list(acc.missing),
            "duplicated": list(acc.duplicated),
            "unplanned": list(acc.unplanned),
            "unplanned_shard": dict(acc.unplanned_shard),
            "unverified_shards": list(acc.unverified_shards),
        },
        "flaky": [case.test_id for _index, case in verdict.flaky],
        "notes": list(verdict.notes),
        **({"selection": verdict.selection.to_json()} if verdict.selection is not None else {}),
    }


def write_timings(
    verdict: Verdict, path: Path, *, variant: str = "", sections: Mapping[str, Any] | None = None
) -> tuple[str, list[str]]:
    """Fold this run's measured durations into the timings store at ``path`` (read first when it
    exists, in any format the planner reads; history per item kept) and write it back atomically.

    Returns what was recorded and the warnings: an existing file that cannot be read (a corrupt
    cache entry) is one warning and a fresh store replaces it, or it would break every later run;
    durations the store skips (over a day, NaN) are counted in a warning. ``sections`` are written
    beside the timings (the test history)."""
    durations = verdict.durations()
    warnings: list[str] = []
    store = TimingsStore()
    if path.exists():
        try:
            store = load_timings(path)
        except InputError as err:
            warnings.append(f"{err}; starting a fresh timings store (this run's durations replace it)")
    known = verdict.skipped_tests()
    new_known = len(set(known) - set(store.items) - set(durations))
    store = store.record(durations, variant=variant or None, known=known)
    store = store.record_collection(verdict.collect_seconds(), variant=variant or None)
    overheads = shard_overheads(verdict.shards, workers=verdict.workers)
    # each test's overhead lands on the one worker that runs it: with K workers a shard pays part of its tests'
    cases = critical_path_tests(verdict.shards, workers=verdict.workers)
    per_test = per_test_overhead(overheads, cases)
    overhead = run_overhead(overheads, per_test or 0.0, cases)
    if overhead is not None:
        key = overhead_variant(variant or None, verdict.workers)
        store = store.record_overhead(overhead, per_test=per_test, variant=key)
    warnings += [w if w.startswith(f"{path}:") else f"{path}: {w}" for w in store.warnings]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(path, f"cannot write timings: {err.strerror or err}") from None
    write_store(store, path, sections)
    where = f" (variant {variant})" if variant else ""
    usable = [item for item, v in durations.items() if math.isfinite(v) and 0 <= v <= MAX_TEST_SECONDS]
    # a plan of whole files times each file too (the sum of its tests'): said apart, or "1,618 measured
    # durations" reads as more tests than the 1,560 the verdict counted (djangorestframework 3.16.1, discovery)
    tests = sum("::" in item for item in usable)  # pytest ids; jest's files and go's packages are items
    files = len(usable) - tests
    recorded = plural(tests, "test") + (f" and {plural(files, 'file')}" if files else "")
    recorded = recorded if tests else plural(files, "item")
    learned = (
        f" and a per-shard overhead of {overhead:.2f} s (median of {len(overheads)} shards)"
        if overhead is not None
        else ""
    )
    if overhead is not None and per_test is not None:
        learned += f" plus {per_test * 1000:.2g} ms per test"
    if new_known:  # skipped tests the store had never seen: known from now on, not measured
        learned += f", and {plural(new_known, 'skipped test')} as known"
    return f"recorded the measured durations of {recorded}{learned} into {path}{where}", warnings
