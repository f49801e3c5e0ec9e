"""The plan stage's front door: ``make_plan`` takes the typed ``options.typed.PlanOptions`` and returns the plan
(``plan``, ``matrix`` and ``local`` call it): it reads the timings, finds the items (``collect``, ``discover``,
``pytest_collect``), estimates them, selects by the change (``select``) and balances them (``planner``,
``choose``). What it says on the way goes to the console; writing the plan is the caller's.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ci_shards.common.console import Console, console_for, plural
from ci_shards.common.errors import InputError, UsageError
from ci_shards.model.fields import rfc3339
from ci_shards.model.matching import item_file
from ci_shards.model.plan import Plan
from ci_shards.options.typed import PlanOptions
from ci_shards.plan import matrix as matrix_mod
from ci_shards.plan.choose import MAX_SHARDS, choose_shards
from ci_shards.plan.collect import glob_items, read_items
from ci_shards.plan.dependencies import DependentFiles, dependent_files
from ci_shards.plan.estimates import match_timings, measured_ratio, outermost_keys, rebase_keys
from ci_shards.plan.planner import plan_items
from ci_shards.plan.pytest_args import check_pytest_words, env_addopts, last_value
from ci_shards.plan.units import literal_rule
from ci_shards.plan.workers import overhead_variant, planned_workers
from ci_shards.run.workers import MachineFiles, WorkerChoice, parse_workers, read_machine
from ci_shards.select.settings import SelectMode
from ci_shards.timings.store import TimingsStore, load_timings, merge_stores

if TYPE_CHECKING:
    from ci_shards.plan.discover import Discovery
    from ci_shards.plan.first_weights import Weights
    from ci_shards.plan.hypothesis_profiles import ProfileReader
    from ci_shards.plan.pytest_collect import Collection
    from ci_shards.select.decide import Selection

# Discovery, collection, their first weights and the selection are imported where a plan uses them, not at the
# top: a plan from timings alone (the action's plan step on a timed suite) needs none of them, and loading them
# cost every plan process ~50 ms (docs/benchmarks.md, "The command table imports no command").


def _created_at(env: Mapping[str, str]) -> str:
    """Now in RFC 3339, or SOURCE_DATE_EPOCH when set (reproducible builds convention)."""
    epoch = env.get("SOURCE_DATE_EPOCH", "")
    when = (
        dt.datetime.fromtimestamp(int(epoch), dt.timezone.utc) if epoch.isdigit() else dt.datetime.now(dt.timezone.utc)
    )
    return rfc3339(when)


def load_durations(
    paths: Sequence[str], *, cwd: Path, env: Mapping[str, str], required: bool = False, explicit: bool = True
) -> list[TimingsStore]:
    """Read the timings files, in order. A ``--durations`` file (``explicit``) must exist and hold at
    least one usable timing: a typo (``.test_duration``) must not silently plan on guesses. Only the
    config's ``timings`` (a store aggregate writes, absent on a fresh clone) may be missing, with a
    warning, unless the items come from it (``required``); a broken file is always an error."""
    console = console_for(env)
    stores = []
    for path in paths:
        if not (cwd / path).exists():
            if explicit or required:
                hint = " (--cached-durations is the flag for a file that may be missing)" if explicit else ""
                raise InputError(path, f"no such timings file{hint}")
            console.warning(f"{path}: no timings file yet; every item gets an estimate (see the plan's notes)")
            continue
        store = load_timings(cwd / path)
        if explicit and not store.estimates():
            raise InputError(path, "no usable timings in this file (no item with a duration)")
        stores.append(store)
    for warning in merge_stores(stores).warnings:
        console.warning(warning)
    return stores


def load_cached_durations(paths: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> list[TimingsStore]:
    """Read timings restored from a cache: a missing or unreadable file is one warning and is left
    out (the next aggregate replaces it), never an error, or one corrupt cache entry would block
    every later run's plan while the cache keeps restoring it."""
    console = console_for(env)
    stores = []
    for path in paths:
        try:
            stores.append(load_timings(cwd / path))
        except InputError as err:
            missing = not (cwd / path).exists()
            console.warning(f"{err}; {'no cached timings yet' if missing else 'the cached timings are ignored'}")
    for warning in merge_stores(stores).warnings:
        console.warning(warning)
    return stores


def first_estimates(stores: Sequence[TimingsStore], variant: str | None) -> dict[str, float]:
    """Per item, the estimate of the first store that has one: e.g. the fresh cached store first,
    a committed ``.test_durations`` only for items the store has not measured yet."""
    estimates: dict[str, float] = {}
    for store in stores:
        for item, seconds in store.estimates(variant).items():
            estimates.setdefault(item, seconds)
    return estimates


def _balance(
    options: PlanOptions,
    items: Sequence[str],
    weights: Weights | None,
    workers: int,
    collection: Mapping[str, float],
    *,
    whole: Sequence[str] = (),
    untimed: bool = False,
) -> dict[str, Any]:
    """``plan_items``' keywords: how the items are balanced into shards; ``whole``: files no shard may cut;
    ``untimed``: no item has a timing."""
    return {
        "granularity": options.granularity,
        "keep_together": (
            *options.keep_together,
            *(weights.keep_whole_rules(items) if weights else ()),
            *(literal_rule(file) for file in whole),
        ),
        "weights": dict(options.weights),
        "max_items_per_shard": options.max_items_per_shard,
        "strategy": options.strategy,
        "cut_cost": options.cut_cost,
        "unknown_factors": weights.factors if weights else None,
        "workers": workers,
        "collection": collection,
        "untimed": untimed,
    }


def _dependent_files(items: Sequence[str], found: _Found, cwd: Path) -> DependentFiles:
    """The planned files of a pytest suite (discovered, or collected: ids from the rootdir) whose tests
    depend on one another (``plan.dependencies``); none for items from a list, globs or the timings alone."""
    if found.discovery is None and found.first_weights is None:
        return DependentFiles((), ())
    base = cwd / (found.rootdir or ".")

    def read(file: str) -> bytes | None:
        try:
            return (base / file).read_bytes()
        except OSError:
            return None

    return dependent_files([item_file(i) for i in items], read)


def first_collection(stores: Sequence[TimingsStore], variant: str | None, items: Sequence[str]) -> dict[str, float]:
    """Each planned test file's learned collection seconds, from the first store that has the file."""
    learned = [store.collection_estimates(variant) for store in stores if store.collection]
    if not learned:
        return {}  # most plans: no item walked (100,000 of them cost a plan job 40 ms)
    files = {item_file(item) for item in items}
    collection: dict[str, float] = {}
    for estimates in learned:
        for file, seconds in estimates.items():
            if file in files:
                collection.setdefault(file, seconds)
    return collection


def _collection_note(collection: Mapping[str, float]) -> tuple[str, ...]:
    if not collection:
        return ()
    return (
        f"each shard also pays the collection of the test files it holds (learned for"
        f" {plural(len(collection), 'file')}, {sum(collection.values()):.1f} s in all)",
    )


def shard_overhead(options: PlanOptions, stores: Sequence[TimingsStore], workers: int = 1) -> tuple[float, str]:
    """(seconds, where they came from): ``--shard-overhead``, else the config, else what aggregate
    learned into the first timings store that has it (median of recent runs; for K workers, of runs with
    K workers, else of one-worker runs), else 0."""
    if options.shard_overhead is not None:
        return options.shard_overhead, options.shard_overhead_source
    variant = overhead_variant(options.variant, workers)
    learned = _first_learned(store.overhead_estimate(variant) for store in stores if store.overhead.get(variant or ""))
    return learned if learned[1] else _first_learned(store.overhead_estimate(options.variant) for store in stores)


def _workers(options: PlanOptions, items: Sequence[str]) -> WorkerChoice:
    """The workers the plan is made for; ``auto`` reads this machine (the edge) and counts the files, which
    only ``auto`` is capped by (not done for a given K: one pass over every item, on the plan's hot path)."""
    auto = parse_workers(options.workers) is None
    machine = read_machine() if auto else MachineFiles()
    files = len({item_file(i) for i in items}) if auto else 1
    return planned_workers(options.workers, files=files, worker_memory=options.worker_memory, machine=machine)


def test_overhead(options: PlanOptions, stores: Sequence[TimingsStore], workers: int = 1) -> tuple[float, str]:
    """(seconds per test, where they came from): what aggregate learned into the first timings
    store that has it (for K workers, from runs with K workers, else from any), else 0. A fixed
    overhead the user sets (flag or config) turns it off too: the learned per-test part is measured
    beside the learned fixed part, not beside theirs."""
    if options.shard_overhead is not None:
        return 0.0, ""
    variant = overhead_variant(options.variant, workers)
    return _first_learned(store.test_overhead_estimate(variant) for store in stores)


def _first_learned(learned: Iterable[tuple[float, int] | None]) -> tuple[float, str]:
    """The first (seconds, runs) a store learned, with where it came from; else (0, "")."""
    for found in learned:
        if found is not None:
            seconds, runs = found
            return seconds, f"learned: median of {plural(runs, 'run')}"
    return 0.0, ""


def with_test_overhead(
    estimates: Mapping[str, float], per_test: float, tests_in: Mapping[str, int] | None = None
) -> dict[str, float]:
    """Every estimate of one test (a ``::`` id) plus ``per_test`` seconds, and of a file whose tests
    discovery counted (``tests_in``) plus ``per_test`` for each; other items as they are (how many
    tests they hold is not known)."""
    counted = tests_in or {}
    return {item: seconds + per_test * counted.get(item, int("::" in item)) for item, seconds in estimates.items()}


def shard_count(shards: str, items: int, *, cap_to_items: bool, console: Console) -> int:
    """``--shards N`` checked (``checked_count``), and with ``cap_to_items`` no more shards than items
    (one line says so)."""
    count = checked_count(shards)
    # no items: the legs stay (never an empty matrix; each empty shard says so)
    if cap_to_items and 0 < items < count:
        console.line(f"ci-shards: --shards {count} capped to {plural(items, 'shard')}: one per item")
        return items
    return count


def checked_count(shards: str) -> int:
    """``--shards N`` as a count, refused (exit 2) when it is none or over ``MAX_SHARDS``: no CI fans out
    that many, and a plan of 10**23 shards would be allocated before anything else failed."""
    if not shards.isdigit() or int(shards) < 1:
        msg = f"--shards must be a whole number ≥ 1 or auto, not {shards!r}"
        raise UsageError(msg)
    count = int(shards)
    if count > MAX_SHARDS:
        msg = (
            f"--shards {shards}: more shards than any CI fans out (GitHub's matrix runs at most"
            f" {matrix_mod.GITHUB_MATRIX_MAX} jobs, GitLab's parallel: 200); use at most {MAX_SHARDS}"
        )
        raise UsageError(msg)
    return count


def make_plan(
    options: PlanOptions,
    *,
    env: Mapping[str, str],
    cwd: Path,
    pytest_args: Sequence[str] | None = None,
    cap_to_items: bool = False,
) -> Plan:
    """Collect the items, read the timings and plan (``created_at`` filled here). ``pytest_args``: ``local``'s
    words after --, which run the shards too (plan and matrix pass theirs in ``options.pytest_args``).
    ``cap_to_items``: ``--shards N`` over the item count makes one shard per item (matrix and local choose
    their own fan-out; a ``plan`` may be read by a CI with a fixed count, so it keeps N, empty shards noted).
    The steps, in the order their errors are told: the timings, the items, their estimates, the selection,
    the shards."""
    if options.shards not in (None, "auto"):
        checked_count(str(options.shards))  # before collecting: the count alone is already wrong
    stores = _stores(options, cwd=cwd, env=env)
    found = _find_items(options, stores, cwd=cwd, env=env, pytest_args=pytest_args)
    estimates, remap_note = match_timings(found.items, found.estimates, allow_unmatched=options.allow_unmatched_timings)
    mode = options.select
    selection = _select(options, found.items, cwd=cwd, rootdir=found.rootdir, env=env)
    items = list(selection.selected) if selection is not None and mode is SelectMode.CHANGED else found.items
    workers = _workers(options, items).count
    estimates, overhead_notes = _with_per_test_overhead(options, stores, estimates, found.discovery, workers)
    weights = found.first_weights
    dependent = _dependent_files(items, found, cwd)
    collection = first_collection(stores, options.variant, items)
    untimed = options.deal_untimed and _nothing_timed(found, estimates)
    balance = _balance(options, items, weights, workers, collection, whole=dependent.whole, untimed=untimed)
    shrink = (found.items, items) if selection is not None and mode is SelectMode.CHANGED else None
    plan = _shard_plan(options, items, estimates, stores, balance, shrink=shrink, env=env, cap_to_items=cap_to_items)
    if found.discovery is not None:
        from ci_shards.plan.discover import whole_files_as_items  # noqa: PLC0415

        plan = dataclasses.replace(
            whole_files_as_items(plan),
            unknown_items=plan.unknown_items + len(found.discovery.new_files),
            notes=(*plan.notes, *found.discovery_notes),
        )
    measured = {i: estimates[i] for i in plan.items if i in estimates}
    skipped = selection.skipped if selection is not None else {}
    return dataclasses.replace(
        plan,
        created_at=_created_at(env),
        rootdir=found.rootdir,
        notes=(
            *plan.notes,
            *((weights.note,) if weights and weights.note else ()),
            *dependent.notes(),
            *overhead_notes,
            *_collection_note(balance["collection"]),
            *((remap_note,) if remap_note else ()),
            *found.source_notes,
        ),
        measured_ratio=measured_ratio([s.items for s in plan.shards], measured) if plan.unknown_items else None,
        skipped_by_diff=skipped if mode is SelectMode.CHANGED else {},
        would_skip=skipped if mode is SelectMode.SHADOW else {},
        selection=(f"select: {mode.value}", *selection.lines) if selection is not None else (),
        deselected=found.deselected,
    )


def _stores(options: PlanOptions, *, cwd: Path, env: Mapping[str, str]) -> list[TimingsStore]:
    """The timings stores of ``--cached-durations`` (first: fresher) and ``--durations``."""
    cached_paths = list(options.cached_durations)
    stores = load_cached_durations(cached_paths, cwd=cwd, env=env)
    required = options.from_timings and not cached_paths
    durations_paths = list(options.durations)
    return stores + load_durations(
        durations_paths, cwd=cwd, env=env, required=required, explicit=options.durations_explicit
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Found:
    """The items every source gave, with their estimates so far; discovery's findings (None without it) and
    ``--pytest``'s weights of tests without timings (None without collection). ``discovery_notes`` are discovery's,
    or without discovery ``--from-timings``' (timings folded into the item that covers them)."""

    items: list[str]
    estimates: dict[str, float]
    rootdir: str | None
    discovery: Discovery | None
    discovery_notes: list[str]
    first_weights: Weights | None
    deselected: int = 0  # the tests ``--pytest``'s collection found deselected (-k, -m, a plugin)
    collection_notes: tuple[str, ...] = ()  # ``--pytest``'s: the collection errors pytest runs past

    @property
    def source_notes(self) -> tuple[str, ...]:
        """The notes the plan takes from its sources here (a discovery plan's are added with its files)."""
        return (*(self.discovery_notes if self.discovery is None else ()), *self.collection_notes)


def _nothing_timed(found: _Found, estimates: Mapping[str, float]) -> bool:
    """Whether no item has a timing: discovery estimated every file it found from its text, or no collected or
    listed item is in the timings."""
    if found.discovery is not None:  # stops at the first timed file: a plan from timings pays next to nothing here
        new = set(found.discovery.new_files)
        return all(item_file(i) in new for i in found.discovery.items)
    return not any(item in estimates for item in found.items)


def _find_items(
    options: PlanOptions,
    stores: Sequence[TimingsStore],
    *,
    cwd: Path,
    env: Mapping[str, str],
    pytest_args: Sequence[str] | None,
) -> _Found:
    """Every item source the options name: ``--items``, ``--glob``, ``--pytest`` collection, discovery
    (files on disk merged with the timings: ``--discover``, or ``--glob`` beside ``--from-timings``) or
    the timings' keys (``--from-timings``, with the ids the timings hold with no usable duration)."""
    estimates = first_estimates(stores, options.variant)
    items: list[str] = []
    sources = 0
    for source in options.items:
        items += read_items(source, cwd=cwd)
        sources += 1
    discovering = options.discover
    if options.globs and not (discovering or options.from_timings):
        items += glob_items(options.globs, cwd=cwd)
        sources += 1
    extra = _pytest_words(options, pytest_args)
    rootdir: str | None = None
    first_weights: Weights | None = None
    collection: Collection | None = None
    if options.pytest and not discovering:
        collection, rootdir, first_weights = _collected(options, extra, estimates, cwd=cwd, env=env)
        items += collection.ids
        sources += 1
    if options.durations_root:
        estimates = rebase_keys(estimates, durations_root=options.durations_root, ids_root=rootdir or ".")
    discovery: Discovery | None = None
    discovery_notes: list[str] = []
    if discovering or (options.globs and options.from_timings):
        discovery, discovery_notes = _discovered(options, [*env_addopts(env), *extra], estimates, cwd=cwd, env=env)
        items += discovery.items
        estimates = dict(discovery.estimates)
        rootdir = discovery.rootdir or rootdir
        sources += 1
    elif options.from_timings:
        untimed = {item for store in stores for item in store.unusable}
        outermost, folded, fold_note = outermost_keys(estimates, untimed)
        items += outermost
        if folded:
            estimates = {**estimates, **folded}
        discovery_notes = [fold_note] if fold_note else []
        sources += 1
    _check_sources(sources, rootdir)
    return _Found(
        items=items,
        estimates=estimates,
        rootdir=rootdir,
        discovery=discovery,
        discovery_notes=discovery_notes,
        first_weights=first_weights,
        deselected=sum(collection.deselected.values()) if collection else 0,
        collection_notes=(collection.run_past_note(),) if collection and collection.errors_run_past else (),
    )


def _collected(
    options: PlanOptions, words: Sequence[str], estimates: Mapping[str, float], *, cwd: Path, env: Mapping[str, str]
) -> tuple[Collection, str, Weights]:
    """``--pytest``'s collection with ``words`` (its ids are the items), its rootdir as the plan records it, and
    the weights of the tests without timings."""
    from ci_shards.plan.pytest_collect import collect_pytest, portable_rootdir  # noqa: PLC0415

    check_pytest_words(words, cwd)
    collection = collect_pytest(words, cwd=cwd, env=env, python=options.python)
    return collection, portable_rootdir(collection.rootdir, cwd), _first_weights(collection, estimates, words)


def _discovered(
    options: PlanOptions, words: Sequence[str], estimates: Mapping[str, float], *, cwd: Path, env: Mapping[str, str]
) -> tuple[Discovery, list[str]]:
    """Discovery's items (``--discover``, or ``--glob`` beside ``--from-timings``) merged with the timings, and
    its notes; ``words``: ``PYTEST_ADDOPTS``'s, then pytest's words after ``--``, as pytest reads them."""
    from ci_shards.plan.discover import discover_items  # noqa: PLC0415

    return discover_items(
        cwd=cwd,
        pytest_files=options.discover,
        pytest_args=words,
        globs=options.globs,
        timings=estimates,
        search_path=sys.path,  # the shards' pytest runs on this interpreter (run --pytest, local)
        autoload=not env.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"),  # the shards' environment, as the plan's
    )


def _first_weights(collection: Collection, estimates: Mapping[str, float], words: Sequence[str]) -> Weights:
    """The collected tests of files without timings weighed by their files' text (``first_weights``)."""
    from ci_shards.plan.first_weights import collected_weights, read_units  # noqa: PLC0415

    units_of = read_units(collection.paths, _profiles(collection.rootdir, words))
    return collected_weights(collection.ids, timed=estimates, deselected=collection.deselected, units_of=units_of)


def _profiles(rootdir: str, words: Sequence[str]) -> ProfileReader:
    """The hypothesis profiles of a collected project (``--hypothesis-profile`` of the settings' addopts or
    the run's words), read as discovery reads them."""
    from ci_shards.plan.discover import settings_in  # noqa: PLC0415
    from ci_shards.plan.hypothesis_profiles import ProfileReader  # noqa: PLC0415

    try:
        settings = settings_in(Path(rootdir))
    except InputError:  # pytest read them (it collected): what it could read and we cannot adds no profile
        settings = None
    addopts = settings.addopts if settings is not None else ()
    return ProfileReader(Path(rootdir), last_value([*addopts, *words], "--hypothesis-profile"))


def _pytest_words(options: PlanOptions, pytest_args: Sequence[str] | None) -> list[str]:
    """pytest's words for collection and discovery, refused where they cannot apply."""
    leftover = options.pytest_args if pytest_args is None else ()
    if leftover and not (options.pytest or options.discover):
        msg = f"unexpected arguments {' '.join(leftover)!r}: arguments after -- are for --pytest or --discover"
        raise UsageError(msg)
    # plan/matrix: --pytest collects, so it and --discover exclude each other; local passes
    # ``pytest_args`` because its --pytest also runs the shards: --discover then replaces collection
    if options.pytest and options.discover and pytest_args is None:
        msg = "--pytest and --discover are two ways to find the tests: give one (docs/planning.md says which fits)"
        raise UsageError(msg)
    if options.from_timings and not options.durations and not options.cached_durations:
        msg = "--from-timings needs --durations FILE (or 'timings' in the config)"
        raise UsageError(msg)
    return list(pytest_args if pytest_args is not None else options.pytest_args)


def _check_sources(sources: int, rootdir: str | None) -> None:
    """At least one item source, and pytest's rootdir-relative ids only with sources of the same root."""
    if not sources:
        msg = "no items: give --items FILE, --glob PATTERN, --pytest [-- ARGS], --discover or --from-timings"
        raise UsageError(msg)
    if rootdir not in (None, ".") and sources > 1:
        msg = (
            f"pytest's ids (--pytest, --discover) are relative to its rootdir {rootdir!r}, the other item sources"
            " to the working directory: plan from the rootdir to combine them"
        )
        raise UsageError(msg)


def _with_per_test_overhead(
    options: PlanOptions,
    stores: Sequence[TimingsStore],
    estimates: dict[str, float],
    discovery: Discovery | None,
    workers: int,
) -> tuple[dict[str, float], tuple[str, ...]]:
    """The estimates with the learned (or given) per-test overhead added, and the note that says so."""
    per_test, per_test_source = test_overhead(options, stores, workers)
    if not per_test:
        return estimates, ()
    estimates = with_test_overhead(estimates, per_test, discovery.new_file_tests if discovery else None)
    return estimates, (
        f"each test's estimate includes {per_test * 1000:.2g} ms of per-test overhead ({per_test_source})",
    )


def _shard_plan(
    options: PlanOptions,
    items: list[str],
    estimates: dict[str, float],
    stores: Sequence[TimingsStore],
    balance: dict[str, Any],
    *,
    shrink: tuple[list[str], list[str]] | None,
    env: Mapping[str, str],
    cap_to_items: bool,
) -> Plan:
    """``items`` balanced into ``--shards N`` shards, or the count ``--shards auto`` chooses; ``shrink``:
    (every item, the selected ones) when ``--select changed`` may lower N."""
    if options.max_items_per_shard is not None and options.max_items_per_shard < 1:
        msg = "--max-items-per-shard must be at least 1"
        raise UsageError(msg)
    overhead, overhead_source = shard_overhead(options, stores, balance["workers"])
    shards = _shards_flag(options)
    if shards == "auto":
        return _auto_plan(options, items, estimates, balance, overhead=overhead, overhead_source=overhead_source)
    count = shard_count(str(shards), len(items), cap_to_items=cap_to_items, console=console_for(env))
    if shrink is not None:
        from ci_shards.select.decide import shrink_shards  # noqa: PLC0415

        count = shrink_shards(count, shrink[0], shrink[1], estimates)
    plan = plan_items(items, estimates, count, **balance)
    if overhead:
        note = f"every shard also pays {overhead:g} s of fixed overhead ({overhead_source})"
        plan = dataclasses.replace(plan, shard_overhead_seconds=overhead, notes=(*plan.notes, note))
    return plan


def _shards_flag(options: PlanOptions) -> str:
    """``--shards``, refused when missing, or when flags of ``--shards auto`` come with a number."""
    shards = options.shards
    if shards is None:
        msg = "--shards is required: a number, or auto with --target-seconds"
        raise UsageError(msg)
    # --shard-overhead is not among them: with --shards N it still replaces the learned overhead
    # (the summary's actual vs estimated; the learned per-test part is turned off with it)
    misplaced = [f for f in ("--target-seconds", "--max-shards") if f in options.given]
    if shards != "auto" and misplaced:
        verb = "apply" if len(misplaced) > 1 else "applies"
        msg = f"{', '.join(misplaced)} {verb} only to --shards auto, not to --shards {shards}"
        raise UsageError(msg)
    return shards


def _auto_plan(
    options: PlanOptions,
    items: list[str],
    estimates: dict[str, float],
    balance: dict[str, Any],
    *,
    overhead: float,
    overhead_source: str,
) -> Plan:
    """``--shards auto``: the count whose slowest shard fits ``--target-seconds`` (plan/choose.py)."""
    target = options.target_seconds
    if target is None:
        msg = "--shards auto needs --target-seconds S (the slowest shard should fit S)"
        raise UsageError(msg)
    if options.max_shards < 1:
        msg = "--max-shards must be at least 1"
        raise UsageError(msg)
    choice = choose_shards(
        items,
        estimates,
        target_seconds=target,
        shard_overhead=overhead,
        overhead_source=overhead_source,
        max_shards=options.max_shards,
        **balance,
    )
    if choice.plan.total > matrix_mod.GITHUB_MATRIX_MAX:
        raise UsageError(matrix_mod.over_matrix_limit(choice.plan.total, "--shards auto"))
    return choice.plan


def _select(
    options: PlanOptions,
    items: Sequence[str],
    *,
    cwd: Path,
    rootdir: str | None,
    env: Mapping[str, str],
) -> Selection | None:
    """The change-based selection (None with ``--select off``); every decision line goes to the console."""
    mode = options.select
    if mode is SelectMode.OFF:
        given = [f for f in ("--base", "--select-coverage", "--select-failures") if f in options.given]
        if given:
            msg = f"{', '.join(given)} apply only to --select changed or shadow (the selection is off)"
            raise UsageError(msg)
        return None
    from ci_shards.select.apply import select_items  # noqa: PLC0415

    selection = select_items(items, cwd=cwd, rootdir=rootdir, env=env, settings=options.selection, base=options.base)
    console = console_for(env)
    for line in selection.lines:
        console.line(f"select ({mode.value}): {line}")
    return selection
