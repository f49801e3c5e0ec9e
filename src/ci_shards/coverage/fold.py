"""Fold every shard's coverage data into one ``CoverageArtifact`` (the aggregate stage's side).

The edge: reads the shard folders, combines coverage.py's data files with its own API
(``CoverageData.update``, each shard's recorded source root mapped away so runners' absolute paths
never matter), analyses the result against the source here (coverage.py's JSON report: statements,
exclusions, branches, functions, contexts) and hashes each file. ``shard_state`` (pure) decides what
each planned shard contributes; only files under the source root are kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import posixpath
import re
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ci_shards.common import json_text
from ci_shards.common.console import plural, strip_control
from ci_shards.common.errors import InputError, why_unreadable
from ci_shards.coverage.artifact import (
    Completeness,
    CoverageArtifact,
    FileCoverage,
    Function,
    ShardCoverage,
    ShardState,
)
from ci_shards.coverage.collect import entry_problem, listed_files, not_coverage_data
from ci_shards.coverage.fold_contexts import ContextReader, FileMap, copy_without_contexts
from ci_shards.junit import JUnitError, parse_junit
from ci_shards.model.outcome import CaseOutcome, Outcome, ShardStatus
from ci_shards.model.plan import Plan
from ci_shards.report.artifacts import JUNIT_FILE, OUTCOME_FILE, discover_shard_folders

_INCOMPLETE = {ShardStatus.TIMED_OUT: "timed out", ShardStatus.CANCELLED: "cancelled"}


def one_line(text: str, limit: int = 300) -> str:
    """Text from a shard folder (untrusted) as one capped line: it reaches the console, where a line
    starting with ``::`` would be a workflow command."""
    return " ".join(strip_control(text).split())[:limit]


def shard_state(
    *, index: int, planned: int, outcome: Outcome | None, problem: str = "", missing: str = ""
) -> ShardCoverage:
    """What a planned shard can give the fold, before its data files are read (``missing``: why the files
    its outcome lists are not all in its folder)."""
    problem = one_line(problem)
    if planned == 0:
        return ShardCoverage(index=index, state=ShardState.EMPTY)
    if outcome is None or outcome.status is ShardStatus.NEVER_STARTED:
        return ShardCoverage(index=index, state=ShardState.NEVER_STARTED, detail=problem)
    if outcome.status in (ShardStatus.EMPTY, ShardStatus.SKIPPED_BY_DIFF):
        return ShardCoverage(index=index, state=ShardState.EMPTY)
    if outcome.coverage is None:
        return ShardCoverage(index=index, state=ShardState.NO_COVERAGE)
    lost = one_line(entry_problem(outcome.coverage) or missing)
    if lost:
        return ShardCoverage(index=index, state=ShardState.LOST, detail=lost)
    if outcome.status in _INCOMPLETE or outcome.not_run:
        why = _INCOMPLETE.get(outcome.status) or f"{plural(len(outcome.not_run), 'planned item')} never ran"
        return ShardCoverage(index=index, state=ShardState.INCOMPLETE, detail=why)
    return ShardCoverage(index=index, state=ShardState.FOLDED)


def relative_to_root(path: str, shard_root: str) -> str | None:
    """A measured path as POSIX relative to the source root, or None when it lies outside it.

    Relative paths (``relative_files``) are already relative; absolute ones under the shard's own
    root lose that prefix (another runner's checkout path means nothing here)."""
    text = path.replace("\\", "/")
    root = shard_root.replace("\\", "/").rstrip("/") + "/"
    if text.startswith(root):
        text = text[len(root) :]
    elif posixpath.isabs(text) or re.match(r"^[A-Za-z]:/", text):
        return None
    normal = posixpath.normpath(text)
    if normal in {".", ".."} or normal.startswith("../"):
        return None
    return normal


@dataclass(frozen=True)
class FoldedShard:
    index: int
    folder: Path | None
    outcome: Outcome | None
    problem: str
    files: tuple[Path, ...] = ()  # the data files its outcome lists, all present (set by shard_states)


def _read_outcome(folder: Path) -> tuple[Outcome | None, str]:
    try:
        return Outcome.from_json(json_text.loads((folder / OUTCOME_FILE).read_text(encoding="utf-8"))), ""
    except FileNotFoundError:
        return None, f"no {OUTCOME_FILE}"
    except (OSError, ValueError, TypeError, KeyError) as err:
        return None, f"{OUTCOME_FILE} unreadable: {err}"


def _shards(plan: Plan, dirs: Sequence[Path]) -> list[FoldedShard]:
    """One entry per planned shard: its folder of this plan, the last finished when retried."""
    best: dict[int, FoldedShard] = {}
    for folder in discover_shard_folders(dirs):
        outcome, problem = _read_outcome(folder)
        if outcome is None or outcome.plan_digest != plan.digest or outcome.shard_total != plan.total:
            continue
        known = best.get(outcome.shard_index)
        if known is None or (known.outcome and known.outcome.finished_at < outcome.finished_at):
            best[outcome.shard_index] = FoldedShard(outcome.shard_index, folder, outcome, problem)
    return [best.get(s.index) or FoldedShard(s.index, None, None, "") for s in plan.shards]


def shard_states(plan: Plan, dirs: Sequence[Path]) -> tuple[list[ShardCoverage], list[FoldedShard]]:
    """Every planned shard's state, and the shards whose data is to be folded."""
    states: list[ShardCoverage] = []
    folded: list[FoldedShard] = []
    for shard in _shards(plan, dirs):
        files: list[Path] = []
        missing = ""
        if shard.folder is not None and shard.outcome is not None and shard.outcome.coverage:
            files, missing = listed_files(shard.folder, shard.outcome.coverage)
        planned = len(plan.shard(shard.index).items)
        state = shard_state(
            index=shard.index, planned=planned, outcome=shard.outcome, problem=shard.problem, missing=missing
        )
        states.append(state)
        if state.state is ShardState.FOLDED:
            folded.append(replace(shard, files=tuple(files)))
    return states, folded


def mark_corrupt(states: Sequence[ShardCoverage], bad: Mapping[int, str]) -> list[ShardCoverage]:
    return [
        ShardCoverage(index=s.index, state=ShardState.CORRUPT, detail=bad[s.index]) if s.index in bad else s
        for s in states
    ]


def placement_notes(relative: Sequence[str | None], root: Path) -> list[str]:
    """What the fold left out: files measured outside the root, and files not in the source here."""
    notes = []
    outside = sum(rel is None for rel in relative)
    if outside:
        notes.append(f"{outside} measured files outside the source root were left out")
    gone = sorted({rel for rel in relative if rel is not None and not (root / rel).is_file()})
    if gone:
        notes.append(f"{len(gone)} measured files are not in the source here: {', '.join(gone[:10])}")
    return notes


def unmeasured_digests(root: Path, measured: set[str], suffixes: Sequence[str]) -> dict[str, str] | None:
    """sha256 of every tracked source file no shard executed (None outside a git checkout)."""
    tracked = tracked_files(root, suffixes)
    if tracked is None:
        return None
    return {p: sha256_of(root / p) for p in tracked if p not in measured and (root / p).is_file()}


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def git_commit(root: Path) -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=False, timeout=30
        )
        if done.returncode == 0:
            return done.stdout.strip()
    return ""


def tracked_files(root: Path, suffixes: Sequence[str]) -> list[str] | None:
    """Files git tracks under ``root`` with these suffixes (None outside a git checkout)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=False, timeout=60)
        if done.returncode == 0:
            names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
            return sorted(n for n in names if n.endswith(tuple(suffixes)))
    return None


class NotCoverageDataError(ValueError):
    """A shard's data file that coverage.py must not be given (its message says why, whole)."""


def _combine_python(
    shards: Sequence[FoldedShard], target: Any, contexts: ContextReader | None
) -> tuple[dict[str, set[int]], dict[int, str]]:
    """Every folded shard's data into ``target`` (a CoverageData), and with the map each context's lines into
    ``contexts`` (fold_contexts: ``target`` then gets no context); a shard whose files cannot all be read is
    marked corrupt and adds nothing."""
    from coverage import CoverageData  # noqa: PLC0415

    shards_of: dict[str, set[int]] = {}
    corrupt: dict[int, str] = {}
    for shard in shards:
        assert shard.folder is not None and shard.outcome is not None and shard.outcome.coverage is not None
        entry = shard.outcome.coverage
        mapped = _mapper(str(entry.get("source_root", "")))
        try:
            parts = []
            for path in shard.files:
                problem = not_coverage_data(path)
                if problem:
                    raise NotCoverageDataError(problem)
                one = CoverageData(basename=str(path))
                one.read()
                parts.append(one)
            read = ContextReader()
            for path in shard.files if contexts is not None else ():
                read.read(path, mapped)  # sqlite3.Error for a damaged file: before anything is added
            _check_kinds(target, parts)
            for one in parts:
                if contexts is None:
                    target.update(one, map_path=mapped)
                else:
                    copy_without_contexts(one, target, mapped)
            if contexts is not None:
                contexts.merge(read)
        except Exception as err:  # DataError, sqlite3.DatabaseError, ...: only this shard is marked
            said = str(err) if isinstance(err, NotCoverageDataError) else f"{type(err).__name__}: {err}"
            corrupt[shard.index] = one_line(said, 200)
            continue
        for one in parts:
            for name in one.measured_files():
                shards_of.setdefault(mapped(name), set()).add(shard.index)
    return shards_of, corrupt


def _check_kinds(target: Any, parts: Sequence[Any]) -> None:
    """coverage.py's "Can't combine branch coverage data with statement data", before anything is added."""
    from coverage.exceptions import DataError  # noqa: PLC0415

    kinds = {one.has_arcs() for one in parts if one.measured_files()}
    if target.measured_files():
        kinds.add(target.has_arcs())
    if len(kinds) > 1:
        msg = "Can't combine branch coverage data with statement data"
        raise DataError(msg)


def _mapper(root: str) -> Callable[[str], str]:
    def mapped(path: str) -> str:
        return relative_to_root(path, root) or path

    return mapped


def _exclusion_reason(text: str, patterns: Sequence[str]) -> str:
    for pattern in patterns:
        with contextlib.suppress(re.error):
            if re.search(pattern, text):
                return f"matches the exclusion pattern {pattern!r}"
    return "inside an excluded block (its opening line matches an exclusion pattern)"


def _file_coverage(
    path: str,
    report: Mapping[str, Any],
    *,
    root: Path,
    shards: set[int],
    contexts: FileMap | None,
    patterns: Sequence[str],
    branch: bool,
) -> FileCoverage:
    source = root / path
    lines = source.read_text(encoding="utf-8", errors="replace").splitlines()
    excluded = {
        n: _exclusion_reason(lines[n - 1] if 0 < n <= len(lines) else "", patterns) for n in report["excluded_lines"]
    }
    functions = []
    for name, region in report.get("functions", {}).items():
        if not name:
            continue
        body = [*region["executed_lines"], *region["missing_lines"], *region["excluded_lines"]]
        start = int(region["start_line"])
        functions.append(Function(name=name, start=start, end=max([start, *body])))
    test_files = contexts.test_files if contexts is not None else {}
    return FileCoverage(
        path=path,
        sha256=sha256_of(source),
        executed=tuple(sorted(report["executed_lines"])),
        missed=tuple(sorted(report["missing_lines"])),
        excluded=excluded,
        branches_executed=tuple(tuple(a) for a in report.get("executed_branches", ())) if branch else None,
        branches_missed=tuple(tuple(a) for a in report.get("missing_branches", ())) if branch else None,
        functions=tuple(sorted(functions, key=lambda f: (f.start, f.name))),
        test_files={t: tuple(sorted(ls)) for t, ls in test_files.items()},
        shards=tuple(sorted(shards)),
        unattributed=tuple(sorted(contexts.unattributed)) if contexts is not None else None,
        context_lines=contexts.groups if contexts is not None else None,
    )


def _json_report(cov: Any) -> dict[str, Any]:
    """coverage.py's JSON report of the combined data, per file (through a temp file: its only output)."""
    try:
        with tempfile.TemporaryDirectory(prefix="ci-shards-cov-") as tmp:
            out = Path(tmp) / "report.json"
            # every measured file, and with the project's `source` setting its never-imported files too
            # (0 %, as a serial `coverage report` counts them); files outside the root are dropped below
            cov.json_report(outfile=str(out), ignore_errors=True)
            return dict(json_text.loads(out.read_text(encoding="utf-8"))["files"])
    except OSError as err:  # a full disk, `ulimit -f`: the fold fails with the reason (exit 2), other outputs stay
        why = f"cannot write coverage.py's report: {err.strerror or err}"
        raise InputError(Path(tempfile.gettempdir()), why) from None


def _configured_coverage(root: Path) -> Any:
    """coverage.py as the project configures it, or an InputError: a broken .coveragerc, setup.cfg, tox.ini or
    pyproject.toml (coverage.py's message names which) is the project's input, not a bug of the fold."""
    import coverage  # noqa: PLC0415 (only the fold of Python coverage needs it)

    try:
        return coverage.Coverage(data_file=None, config_file=True)
    except (coverage.CoverageException, ValueError, RecursionError) as err:  # ValueError: a file not UTF-8
        raise InputError(root, f"coverage.py cannot read its configuration: {why_unreadable(err)}") from None


def fold_python(plan: Plan, dirs: Sequence[Path], *, root: Path, commit: str, created_at: str) -> CoverageArtifact:
    """The folded coverage.py data of every shard under ``dirs``, analysed against the source in ``root``.

    coverage.py reads the project's configuration from the working directory (run from ``root``)."""
    import coverage  # noqa: PLC0415

    states, folded = shard_states(plan, dirs)
    cov = _configured_coverage(root)
    cov.set_option("run:relative_files", True)
    combined = cov.get_data()
    mapped = any(((s.outcome and s.outcome.coverage) or {}).get("map") for s in folded)
    reader = ContextReader() if mapped else None
    shards_of, bad = _combine_python(folded, combined, reader)
    states = mark_corrupt(states, bad)
    ran = _tests_ran(folded) if mapped else None
    table = reader.table(ran or ()) if reader is not None else None
    inside = {n: relative_to_root(n, str(root)) for n in combined.measured_files()}
    present = sorted(rel for rel in inside.values() if rel is not None and (root / rel).is_file())
    notes = placement_notes(list(inside.values()), root)
    branch = combined.has_arcs()
    files: list[FileCoverage] = []
    if present:
        report = _json_report(cov)
        exclude = cov.get_option("report:exclude_lines")
        patterns = [str(p) for p in exclude] if isinstance(exclude, list) else []
        names_of: dict[str, list[str]] = {}
        for name, rel in inside.items():
            if rel is not None:
                names_of.setdefault(rel, []).append(name)
        for key, data in report.items():
            rel = relative_to_root(key, str(root.resolve()))
            if rel is None or not (root / rel).is_file():
                continue
            names = names_of.get(rel, [])
            files.append(
                _file_coverage(
                    rel,
                    data,
                    root=root,
                    shards={i for n in names for i in shards_of.get(n, ())},
                    contexts=reader.file_map(names, table or ()) if reader is not None else None,
                    patterns=patterns,
                    branch=branch,
                )
            )
    return CoverageArtifact(
        created_at=created_at,
        commit=commit,
        plan_digest=plan.digest,
        tool="coverage.py",
        tool_version=coverage.__version__,
        branch=branch,
        completeness=Completeness(total=plan.total, shards=tuple(states)),
        files=tuple(files),
        unmeasured=unmeasured_digests(root, {f.path for f in files}, (".py",)),
        notes=tuple(notes),
        tests_ran=ran,
        contexts=table,
    )


def _tests_ran(folded: Sequence[FoldedShard]) -> tuple[str, ...]:
    """The tests the folded shards ran, not skipped (their junit.xml). A shard whose report cannot be read adds
    none: a test the map does not know is one a selection keeps."""
    ran: set[str] = set()
    for shard in folded:
        if shard.folder is None:
            continue
        # a map per test file (--coverage-map-per file) vouches for files: their contexts are files too
        per_file = ((shard.outcome and shard.outcome.coverage) or {}).get("map_per") == "file"
        with contextlib.suppress(OSError, ValueError, JUnitError):
            ran.update(
                c.test_id.split("::", 1)[0] if per_file else c.test_id
                for c in parse_junit(shard.folder / JUNIT_FILE)
                if c.outcome is not CaseOutcome.SKIPPED
            )
    return tuple(sorted(ran))
