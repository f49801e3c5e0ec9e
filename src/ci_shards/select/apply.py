"""The selection's edge for ``plan --select``: read git, the environment, the config's files, then decide.

Every problem (git missing, a shallow clone, an unknown base, a map that errors) becomes a reason to
run everything, never an error: selection only ever removes work when it is sure.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ci_shards.common import json_text, toml_text
from ci_shards.common.tables import table_at
from ci_shards.model.matching import item_file, owning_item
from ci_shards.select import ci, git
from ci_shards.select.decide import AlwaysRun, Selection, decide, run_everything
from ci_shards.select.diff import ChangedFile, ChangeKind
from ci_shards.select.imports import ImportMapError, build_import_map
from ci_shards.select.maps import (
    CoverageMap,
    MapError,
    TestMap,
    TouchfilesMap,
    coverage_entries,
    coverage_lines,
    tests_ran,
)
from ci_shards.select.narrow import Confined, Narrowing, confine
from ci_shards.select.paths import shown
from ci_shards.select.settings import SelectionSettings
from ci_shards.select.shared_state import shares_state


def _event(env: Mapping[str, str]) -> Mapping[str, Any]:
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        data = json_text.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, Mapping) else {}


def item_paths(items: Sequence[str], *, cwd: Path, top: Path, rootdir: str | None) -> dict[str, str]:
    """Each item's file as a repository path (items are relative to ``rootdir`` under ``cwd``)."""
    prefix = Path(os.path.relpath(cwd.resolve(), top.resolve())).as_posix()
    base = posixpath.normpath(posixpath.join(prefix, rootdir or "."))
    return {i: posixpath.normpath(posixpath.join(base, item_file(i))) for i in items}


def _pytest_plugins(top: Path) -> list[str]:
    """Module names of the project's own pytest plugins (``[project.entry-points.pytest11]``)."""
    if not (top / "pyproject.toml").is_file():
        return []
    try:
        data = toml_text.loads((top / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    entries = table_at(data, "project", "entry-points", "pytest11")
    return [str(v).split(":")[0].strip() for v in entries.values()] if entries is not None else []


def _base(top: Path, flag: str | None, env: Mapping[str, str], event: Mapping[str, Any], default: str | None) -> str:
    """The base commit, as the issue orders them: ``--base``, the CI's, the merge base with the default branch."""
    named = (flag, "--base") if flag else ci.ci_base(env, event)
    if named is not None:
        sha = git.resolve(top, named[0])
        if not git.is_ancestor(top, sha):
            msg = f"base {shown(named[0])} ({named[1]}) is not an ancestor of HEAD; {git.DEEPEN_HINT}, or rebase"
            raise git.GitProblem(msg)
        return sha
    if default is None:
        msg_0 = "no base: give --base REF (no CI base and no default branch found)"
        raise git.GitProblem(msg_0)
    return git.merge_base(top, default)


def _coverage_map(
    top: Path, cwd: Path, path: str | None, *, base: str, changed: Sequence[str], lines: list[str]
) -> CoverageMap | None:
    if path is None:
        return None
    if not (cwd / path).is_file():
        lines.append(f"coverage map: {path} not found, not used")
        return None
    try:
        data = json_text.loads((cwd / path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        msg = f"{path}: unreadable ({err.__class__.__name__})"
        raise MapError(msg) from None
    try:
        executed, unmeasured = coverage_entries(data)
        lines_of, ran = coverage_lines(data), tests_ran(data)  # a damaged compact map: MapError naming it
    except MapError as err:
        msg = f"{path}: {err}"
        raise MapError(msg) from None
    return CoverageMap(
        executed_by=executed,
        unmeasured=unmeasured,
        base_sha256=git.base_sha256(top, base, changed),
        lines=lines_of,
        tests_ran=ran,
    )


def _narrowing(
    top: Path, coverage: CoverageMap, *, base: str, changed: Sequence[ChangedFile], lines: list[str]
) -> dict[str, Narrowing]:
    """Per modified Python file whose change lies inside function bodies: what the coverage map narrows it
    to. Any other file keeps the file-level answers; why is one line when the map could have helped."""
    found: dict[str, Narrowing] = {}
    for change in changed:
        if change.kind is not ChangeKind.MODIFIED or not change.path.endswith(".py"):
            continue
        source, head = git.text_at(top, base, change.path), git.text_at(top, "HEAD", change.path)
        if source is None or head is None:
            continue
        confined = confine(source, head, git.zero_context_diff(top, base, change.path))
        answer = coverage.narrow(change.path, confined) if isinstance(confined, Confined) else confined.reason
        if isinstance(answer, Narrowing):
            found[change.path] = answer
        else:
            lines.append(f"coverage cannot narrow {shown(change.path)}: {answer}")
    return found


def _failed_items(cwd: Path, path: str | None, items: Sequence[str], lines: list[str]) -> frozenset[str]:
    """Items owning a test of the last base run's failures file (failures.jsonl, or one test id a line)."""
    if path is None:
        return frozenset()
    try:
        text = (cwd / path).read_text(encoding="utf-8")
    except OSError:
        lines.append(f"failures of the last base run: {path} not found, not used")
        return frozenset()
    ids = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("{"):
            try:
                record = json_text.loads(line)
            except ValueError:
                continue
            if isinstance(record, Mapping) and isinstance(record.get("test_id"), str):
                ids.append(record["test_id"])
        elif line:
            ids.append(line)
    planned = frozenset(items)
    return frozenset(o for o in (owning_item(t, planned) for t in ids) if o is not None)


def _run_all_or_base(
    top: Path, base: str | None, env: Mapping[str, str], event: Mapping[str, Any], settings: SelectionSettings
) -> tuple[str, str]:
    """``(reason, "")`` when the CI, the clone or a commit says to run everything, else ``("", base commit)``."""
    branch = ci.ci_branch(env) or git.current_branch(top)
    default = settings.default_branch or ci.ci_default_branch(env, event) or git.default_branch(top)
    reason = ci.run_all_reason(env, event, settings, branch=branch, default_branch=default)
    if reason:
        return reason, ""
    if git.is_shallow(top):
        return f"a shallow clone cannot show what changed; {git.DEEPEN_HINT}", ""
    base_sha = _base(top, base, env, event, default)
    if ci.has_run_all_trailer(git.messages(top, base_sha)):
        return "a commit carries the trailer 'CI-Shards: run-all'", ""
    return "", base_sha


def select_items(
    items: Sequence[str],
    *,
    cwd: Path,
    rootdir: str | None,
    env: Mapping[str, str],
    settings: SelectionSettings,
    base: str | None = None,
) -> Selection:
    """Decide which of ``items`` the change selects (everything, with the reason, when unsure)."""
    event = _event(env)
    changed: tuple[Any, ...] = ()
    try:
        top = git.toplevel(cwd)
        reason, base_sha = _run_all_or_base(top, base, env, event, settings)
        if reason:
            return run_everything(items, reason)
        changed = git.changed_files(top, base_sha)
        lines = [f"base {base_sha[:12]}"]
        paths = item_paths(items, cwd=cwd, top=top, rootdir=rootdir)
        python = git.tracked(top, ["*.py"])
        sources = {p: (top / p).read_text(encoding="utf-8", errors="replace") for p in python if (top / p).is_file()}
        tests = sorted({p for p in paths.values() if p.endswith(".py")})
        imports = build_import_map(sources, tests, plugins=_pytest_plugins(top))
        maps: list[TestMap] = [imports]
        if settings.touchfiles:
            maps.append(TouchfilesMap(rules=settings.touchfiles, test_files=frozenset(paths.values())))
        touched = sorted({p for c in changed for p in c.paths})
        coverage = _coverage_map(top, cwd, settings.coverage, base=base_sha, changed=touched, lines=lines)
        narrowing: dict[str, Narrowing] = {}
        if coverage is not None:
            maps.append(coverage)
            narrowing = _narrowing(top, coverage, base=base_sha, changed=changed, lines=lines)
        always = AlwaysRun(
            marked_files=imports.always, failed_items=_failed_items(cwd, settings.failures, items, lines)
        )
    except git.GitProblem as err:
        return run_everything(items, str(err), changed)
    except (ImportMapError, MapError) as err:
        return run_everything(items, f"a map source errors: {err}", changed)
    stateful = {t for t in tests if t in sources and shares_state(sources[t])} if narrowing else set()
    decided = decide(
        items,
        item_paths=paths,
        changed=changed,
        maps=maps,
        settings=settings,
        always=always,
        narrowing=narrowing,
        shared_state=stateful,
    )
    return Selection(
        selected=decided.selected,
        skipped=decided.skipped,
        lines=(*lines, *decided.lines),
        run_all=decided.run_all,
        changed=decided.changed,
    )
