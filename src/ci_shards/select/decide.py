"""The decision: which planned items a change selects, and the rule that skipped each other one. Pure.

Order, first match wins for the whole run:
1. a reason to run everything decided before (environment, git, a map error) → everything;
2. an empty diff → everything (an empty diff is never evidence that nothing can break);
3. a changed file matching a ``global`` glob → everything;
4. a changed file no map can answer for (and not ignored, not a test file) → everything.
Otherwise the selected test files are the union of: test files in the change, the maps' answers for
every changed path (both sides of a rename), and the always-run files and items. A modified file whose
change the coverage map narrows (``narrowing``: every hunk inside function bodies the map has fresh
lines for) contributes instead the test files that executed those functions on the base, plus those of
the file-level answer the map has no context for, plus its touchfiles. Every decision is one line in
``Selection.lines``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from ci_shards.select.diff import ChangedFile, ChangeKind
from ci_shards.select.maps import TestMap
from ci_shards.select.narrow import Narrowing
from ci_shards.select.paths import first_match, shown
from ci_shards.select.recorded import RecordedTests
from ci_shards.select.settings import SelectionSettings

LISTED = 5  # files named per line before "and N more"


def _names(paths: Collection[str]) -> str:
    ordered = sorted(shown(p) for p in paths)
    more = f" and {len(ordered) - LISTED} more" if len(ordered) > LISTED else ""
    return ", ".join(ordered[:LISTED]) + more


@dataclass(frozen=True, kw_only=True)
class Selection:
    """What the selection decided. ``run_all``: why everything runs ("" when a selection applies)."""

    selected: tuple[str, ...]
    skipped: Mapping[str, str] = field(default_factory=dict)  # item → the rule that skipped it
    lines: tuple[str, ...] = ()
    run_all: str = ""
    changed: tuple[ChangedFile, ...] = ()


def run_everything(items: Sequence[str], reason: str, changed: Sequence[ChangedFile] = ()) -> Selection:
    return Selection(
        selected=tuple(items), lines=(f"run everything: {reason}",), run_all=reason, changed=tuple(changed)
    )


@dataclass(frozen=True, kw_only=True)
class AlwaysRun:
    """Items that run whatever the change: marked files, config globs, the last base run's failures."""

    marked_files: frozenset[str] = frozenset()  # test files with @pytest.mark.ci_shards_always
    failed_items: frozenset[str] = frozenset()  # items that failed or were flaky in the last base run


def decide(
    items: Sequence[str],
    *,
    item_paths: Mapping[str, str],
    changed: Sequence[ChangedFile],
    maps: Sequence[TestMap],
    settings: SelectionSettings,
    always: AlwaysRun = AlwaysRun(),
    narrowing: Mapping[str, Narrowing] | None = None,
    shared_state: Collection[str] = frozenset(),
) -> Selection:
    """Select from ``items`` (``item_paths``: each item's test file, relative to the repository root), in
    the order of the module's docstring: a reason to run everything first, then what each changed path
    selects, then the always-run items, then the reason each other item is skipped. ``shared_state``: test
    files whose tests may keep state for each other, narrowed as wholes."""
    if not changed:
        return run_everything(items, "the diff against the base is empty")
    answers = _Answers(test_files=frozenset(item_paths.values()), shared_state=frozenset(shared_state))
    answers.lines.append(f"changed files ({len(changed)}): {_names([c.describe() for c in changed])}")
    for change in changed:
        for path in change.paths:
            reason = answers.answer(path, change, maps, settings, narrowing or {})
            if reason:
                return run_everything(items, reason, changed)
    lines = answers.lines
    selected_files = answers.selected_files()
    chosen = _always_run(items, item_paths, settings, always, lines)
    chosen |= {i for i in items if item_paths[i] in selected_files or answers.by_test.keeps(i, item_paths[i])}
    maps_used = ", ".join(m.name for m in maps)
    skipped = {
        i: (
            f"coverage: did not execute {', '.join(answers.narrowed_out[item_paths[i]])} on base"
            if item_paths[i] in answers.narrowed_out
            else f"no changed file reaches {item_paths[i]} (maps: {maps_used})"
        )
        for i in items
        if i not in chosen
    }
    lines.append(f"selected {len(chosen)} of {len(items)} items; {len(skipped)} skipped by the diff")
    return Selection(
        selected=tuple(i for i in items if i in chosen), skipped=skipped, lines=tuple(lines), changed=tuple(changed)
    )


@dataclass
class ByTest:
    """The test files a per-test map narrows to some of their tests: those that executed a changed function
    on the base (a test id, or the file's own context: all of it), and those it has no context for (new, or
    skipped on the base: the map cannot vouch for them). A file also selected whole is not asked."""

    ran: dict[str, RecordedTests] = field(default_factory=dict)  # test file → the contexts that ran a change
    measured: RecordedTests = field(default_factory=lambda: RecordedTests.of(()))

    def add(self, narrowed: Narrowing, files: Collection[str], whole: Collection[str]) -> set[str]:
        """Record ``narrowed``; the test files of ``files`` (the file-level answer) it keeps some tests of, the
        others' tests by the same rule (none: a per-file map). ``whole``: files kept whole (touchfiles, and
        files that ran the change whose tests may share state)."""
        if narrowed.ran is None or narrowed.measured_ids is None:
            return set()
        some = {t for t in files if t not in whole and t not in narrowed.ran.ids}
        for test in some:
            self.ran[test] = self.ran[test] | narrowed.ran if test in self.ran else narrowed.ran
        self.measured = narrowed.measured_ids  # the same map answers for every file
        return some

    def keeps(self, item: str, test_file: str) -> bool:
        ran = self.ran.get(test_file)
        return ran is not None and (ran.speak_for(item) or not self.measured.speak_for(item))


@dataclass(kw_only=True)
class _Answers:
    """What the changed paths selected so far, and the lines that say so (in the order they were decided)."""

    test_files: frozenset[str]
    lines: list[str] = field(default_factory=list)
    narrowed_files: set[str] = field(default_factory=set)
    by_map: dict[str, set[str]] = field(default_factory=dict)
    in_change: set[str] = field(default_factory=set)
    ignored: list[str] = field(default_factory=list)
    narrowed_out: dict[str, list[str]] = field(default_factory=dict)  # test file → changed functions it missed
    shared_state: frozenset[str] = frozenset()  # test files whose tests may keep state for each other
    by_test: ByTest = field(default_factory=ByTest)  # the test files narrowed further, to the tests that ran it

    def answer(
        self,
        path: str,
        change: ChangedFile,
        maps: Sequence[TestMap],
        settings: SelectionSettings,
        narrowing: Mapping[str, Narrowing],
    ) -> str:
        """Take one changed path's answer; the reason to run everything instead ("" when there is none)."""
        glob = first_match(path, settings.global_globs)
        if glob is not None:
            return f"{shown(path)} changed, a global file ({glob!r})"
        if path in self.test_files:
            self.in_change.add(path)
            return ""
        answers = {m.name: m.tests_for(path) for m in maps}
        known = {name: tests for name, tests in answers.items() if tests is not None}
        if not known:
            if first_match(path, settings.ignore) is not None:
                self.ignored.append(path)
                return ""
            names = ", ".join(m.name for m in maps) or "none configured"
            return f"no map knows which tests {shown(path)} affects (maps: {names})"
        narrowed = narrowing.get(path) if change.kind is ChangeKind.MODIFIED else None
        if narrowed is None:
            for name, tests in known.items():
                self.by_map.setdefault(name, set()).update(tests)
            return ""
        kept, dropped = _narrowed(narrowed, known)
        whole = {t for t in narrowed.tests if t in self.shared_state} | known.get("touchfiles", frozenset())
        some = self.by_test.add(narrowed, kept | dropped, whole)
        self.lines.append(
            f"coverage narrowed {shown(path)} to {len(kept)} of {len(kept | dropped)} test files"
            + (", then to the tests that ran it" if some else "")
            + f" (the changed code is inside {narrowed.functions})"
        )
        self.narrowed_files |= kept - some
        for test in dropped | some:
            self.narrowed_out.setdefault(test, []).append(narrowed.functions)
        return ""

    def selected_files(self) -> set[str]:
        """Every selected test file, with a line for the change's own test files, each map, the ignored."""
        selected = set(self.narrowed_files)
        if self.in_change:
            self.lines.append(f"test files in the change: {_names(self.in_change)}")
            selected |= self.in_change
        for name, found in sorted(self.by_map.items()):
            self.lines.append(f"{name} map selected {len(found)} test files" + (f": {_names(found)}" if found else ""))
            selected |= found
        if self.ignored:
            self.lines.append(f"affect no test (ignore globs): {_names(self.ignored)}")
        return selected


def _always_run(
    items: Sequence[str],
    item_paths: Mapping[str, str],
    settings: SelectionSettings,
    always: AlwaysRun,
    lines: list[str],
) -> set[str]:
    """The items that run whatever the change, with a line for each rule that chose some."""
    chosen: set[str] = set()
    reasons = {
        "marked ci_shards_always": {i for i in items if item_paths[i] in always.marked_files},
        "config selection.always": {
            i for i in items if first_match(i, settings.always) or first_match(item_paths[i], settings.always)
        },
        "failed or flaky in the last base run": {i for i in items if i in always.failed_items},
    }
    for why, hits in reasons.items():
        if hits:
            lines.append(f"always run ({why}): {len(hits)} items")
            chosen |= hits
    return chosen


def _narrowed(narrowed: Narrowing, known: Mapping[str, frozenset[str]]) -> tuple[set[str], set[str]]:
    """The test files a narrowed change keeps, and those of the file-level answer it drops. Kept: those that
    executed the changed functions, those the map has no context for (skipped or new on the base: the map
    cannot vouch for them), and the touchfiles' answer (a declared dependency)."""
    fallback = {t for name, tests in known.items() if name != "touchfiles" for t in tests}
    kept = set(narrowed.tests) | {t for t in fallback if t not in narrowed.measured} | set(known.get("touchfiles", ()))
    return kept, fallback - kept


def shrink_shards(count: int, items: Sequence[str], selected: Sequence[str], estimates: Mapping[str, float]) -> int:
    """A fixed shard count scaled to the selected share of the work (at least 1, at most ``count``), so
    a change that selects a fifth of the suite runs on about a fifth of the machines. Items without an
    estimate count as the mean of the known ones (or 1 s each when none is known)."""
    known = [estimates[i] for i in items if i in estimates]
    fallback = sum(known) / len(known) if known else 1.0
    total = sum(estimates.get(i, fallback) for i in items)
    chosen = sum(estimates.get(i, fallback) for i in selected)
    if total <= 0 or not selected:
        return 1
    return max(1, min(count, len(selected), math.ceil(count * chosen / total)))
