"""Fold Node's V8 coverage (``NODE_V8_COVERAGE`` dumps) of every shard into one ``CoverageArtifact``.

The edge: reads each folded shard's dumps, keeps the scripts under that shard's source root
(``file://`` URLs; ``node_modules`` and Node's own modules left out), turns each process' ranges into
lines and functions (``v8.script_lines``, against the source here) and unites them: a line ran when
any process ran it. The map comes free: ``node --test`` runs each test file in its own process, so
the test files a process loaded (of its shard's planned items) executed what that process ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlparse

from ci_shards.common import json_text
from ci_shards.coverage.artifact import Completeness, CoverageArtifact, FileCoverage, Function
from ci_shards.coverage.fold import (
    FoldedShard,
    mark_corrupt,
    one_line,
    placement_notes,
    relative_to_root,
    sha256_of,
    shard_states,
    unmeasured_digests,
)
from ci_shards.coverage.v8 import ScriptLines, countable, script_lines
from ci_shards.model.matching import item_file
from ci_shards.model.plan import Plan

SOURCE_SUFFIXES: Final = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")


@dataclass
class _FileFold:
    executed: set[int] = field(default_factory=set)
    functions: dict[tuple[str, int, int], bool] = field(default_factory=dict)
    test_files: dict[str, set[int]] = field(default_factory=dict)
    shards: set[int] = field(default_factory=set)

    def add(self, lines: ScriptLines, shard: int, tests: Sequence[str]) -> None:
        """One script's lines from one shard's dump: ran lines, the shard, the planned test files, functions."""
        ran = {n for n, count in lines.counts.items() if count > 0}
        self.executed |= ran
        self.shards.add(shard)
        for test in tests:
            self.test_files.setdefault(test, set()).update(ran)
        for function, called in lines.functions:
            key = (function.name, function.start, function.end)
            self.functions[key] = self.functions.get(key, False) or called

    def coverage(self, rel: str, source: str | None, root: Path) -> FileCoverage:
        """The file's coverage over its countable statements (``source``: the file as read at the fold)."""
        assert source is not None
        statements = set(countable(source))
        ran = self.executed & statements
        by_start = sorted(self.functions, key=lambda k: (k[1], k[0]))
        return FileCoverage(
            path=rel,
            sha256=sha256_of(root / rel),
            executed=tuple(sorted(ran)),
            missed=tuple(sorted(statements - ran)),
            functions=tuple(Function(name=n, start=a, end=b) for n, a, b in by_start),
            test_files={t: tuple(sorted(ls & statements)) for t, ls in self.test_files.items() if ls & statements},
            shards=tuple(sorted(self.shards)),
        )


def _scripts(dump: Mapping[str, Any], shard_root: str) -> list[tuple[str, Sequence[Mapping[str, Any]]]]:
    found = []
    for script in dump["result"]:
        url = str(script.get("url", ""))
        if not url.startswith("file://"):
            continue
        rel = relative_to_root(unquote(urlparse(url).path), shard_root)
        if rel is not None and "node_modules/" not in f"/{rel}":
            found.append((rel, script["functions"]))
    return found


def _read_dumps(shard: FoldedShard) -> list[dict[str, Any]]:
    dumps = []
    for path in shard.files:
        dump = json_text.loads(path.read_text(encoding="utf-8"))
        if not isinstance(dump, dict) or not isinstance(dump.get("result"), list):
            msg = f"{path.name}: no V8 coverage result"
            raise ValueError(msg)
        dumps.append(dump)
    return dumps


def fold_v8(plan: Plan, dirs: Sequence[Path], *, root: Path, commit: str, created_at: str) -> CoverageArtifact:
    states, folded = shard_states(plan, dirs)
    files: dict[str, _FileFold] = {}
    sources: dict[str, str | None] = {}
    seen: list[str | None] = []
    bad: dict[int, str] = {}
    for shard in folded:
        try:
            dumps = _read_dumps(shard)
        except (OSError, ValueError) as err:  # json.JSONDecodeError is a ValueError
            bad[shard.index] = one_line(str(err), 200)
            continue
        assert shard.outcome is not None and shard.outcome.coverage is not None
        shard_root = str(shard.outcome.coverage.get("source_root", ""))
        planned_files = {item_file(i) for i in plan.shard(shard.index).items}
        for dump in dumps:
            scripts = _scripts(dump, shard_root)
            seen.extend(rel for rel, _f in scripts)
            tests = sorted(rel for rel, _f in scripts if rel in planned_files)
            for rel, functions in scripts:
                if rel not in sources:
                    path = root / rel
                    sources[rel] = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
                source = sources[rel]
                if source is None:
                    continue
                files.setdefault(rel, _FileFold()).add(script_lines(source, functions), shard.index, tests)
    result = [fold.coverage(rel, sources[rel], root) for rel, fold in sorted(files.items())]
    return CoverageArtifact(
        created_at=created_at,
        commit=commit,
        plan_digest=plan.digest,
        tool="v8",
        tool_version="",
        branch=False,
        completeness=Completeness(total=plan.total, shards=tuple(mark_corrupt(states, bad))),
        files=tuple(result),
        unmeasured=unmeasured_digests(root, set(files), SOURCE_SUFFIXES),
        notes=tuple(placement_notes(seen, root)),
    )
