"""The run stage's side of coverage: how a shard's command is wrapped, and what its data amounted to.

Python (``--pytest``, or a ``pytest`` / ``python -m MODULE`` command): the command runs under
``ci_shards.coverage.launch`` (coverage.py with ``relative_files``, ``parallel`` and subprocess
patching, the project's own configuration otherwise honoured). Node (``node``, ``npx``, ``npm``,
``jest``, ``vitest``...): ``NODE_V8_COVERAGE`` points at the shard's folder, and every Node process
dumps its raw V8 coverage there at exit.

The data goes to ``<shard folder>/coverage/``; ``describe`` turns what is there into outcome.json's
``coverage`` entry. Missing or unreadable data is said there (``problem``), never in the tests'
verdict.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import shutil
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePath
from typing import Any, Final

from ci_shards.common.errors import UsageError
from ci_shards.common.interpreter import COVERAGE_REQUIREMENT, Interpreter
from ci_shards.coverage.launch import DATA_DIR_ENV, DATA_STEM, MAP_PER_ENV, SAVED_STEM

COVERAGE_DIR: Final = "coverage"
LAUNCH: Final = "ci_shards.coverage.launch"
MAP_PLUGIN: Final = "ci_shards.coverage.pytest_map"
INSTALL_HINT: Final = "pip install 'ci-shards[coverage]'"
_NODE_COMMANDS: Final = frozenset({"node", "npx", "npm", "pnpm", "yarn", "jest", "vitest", "bun"})


class Tool(Enum):
    COVERAGE_PY = "coverage.py"
    V8 = "v8"


@dataclass(frozen=True, kw_only=True)
class CoverageRequest:
    """``run --coverage`` (and ``--coverage-map``, on by default for pytest; ``--coverage-map-per``)."""

    map: bool = True
    per: str = "test"  # the map's contexts: each test's node id, or each test file


def tool_for(command: Sequence[str], *, pytest: bool) -> Tool:
    """Which collector fits the shard's command; a usage error when none does."""
    if pytest:
        return Tool.COVERAGE_PY
    name = PurePath(command[0]).name if command else ""
    if name in _NODE_COMMANDS:
        return Tool.V8
    if name == "pytest" or (name.startswith("python") and list(command[1:2]) == ["-m"] and len(command) > 2):
        return Tool.COVERAGE_PY
    msg = (
        f"--coverage: cannot measure {name or 'an empty command'!r}: use --pytest, a `pytest ...` or "
        "`python -m MODULE ...` command (coverage.py), or a node/npx/npm/jest/vitest command (V8)"
    )
    raise UsageError(msg)


def check_available(tool: Tool, interpreter: Interpreter | None = None) -> None:
    """coverage.py where the measured tests run: ``interpreter`` (``--pytest``'s, another environment's with
    ``--python``), else this Python (a ``pytest`` or ``python -m`` command of ci-shards' own environment)."""
    if tool is not Tool.COVERAGE_PY:
        return
    if interpreter is not None and not interpreter.is_ours:
        if not interpreter.has_coverage:
            msg = (
                f"--coverage: {interpreter.describe()} has no coverage.py: install {COVERAGE_REQUIREMENT} into the"
                " environment the tests run in"
            )
            raise UsageError(msg)
        return
    if importlib.util.find_spec("coverage") is None:
        msg = f"--coverage needs coverage.py in this Python: {INSTALL_HINT}"
        raise UsageError(msg)


def wrap(argv: Sequence[str], *, tool: Tool, python: str, request: CoverageRequest) -> list[str]:
    """``argv`` run under coverage.py (V8 needs no wrapper, only the environment)."""
    if tool is Tool.V8:
        return list(argv)
    if PurePath(argv[0]).name == "pytest":  # the console script: pytest of the Python running ci-shards
        interpreter, module, rest = python, "pytest", list(argv[1:])
    else:  # [python, -m, MODULE, ...]: the same interpreter (it must have ci-shards and coverage)
        interpreter, module, rest = argv[0], argv[2], list(argv[3:])
    plugin = ["-p", MAP_PLUGIN] if request.map and module == "pytest" else []
    # the map after `-p ci_shards`: loading it first imports the ci_shards package, and pytest then warns that
    # it cannot rewrite the plugin's asserts (an error under a project's `filterwarnings = error`)
    lead = rest[:2] if rest[:2] == ["-p", "ci_shards"] else []
    return [interpreter, "-m", LAUNCH, "-m", module, *lead, *plugin, *rest[len(lead) :]]


def environment(tool: Tool, data_dir: Path, per: str = "test") -> dict[str, str]:
    if tool is Tool.V8:
        return {"NODE_V8_COVERAGE": str(data_dir.resolve())}
    return {DATA_DIR_ENV: str(data_dir.resolve()), MAP_PER_ENV: per}


def prepare(shard_dir: Path) -> Path:
    """A fresh ``coverage/`` folder: data from an earlier run in the same place must not be folded."""
    data_dir = shard_dir / COVERAGE_DIR
    if data_dir.exists():
        shutil.rmtree(data_dir)
    data_dir.mkdir(parents=True)
    return data_dir


def _version(tool: Tool) -> str:
    if tool is Tool.V8:
        return ""
    # here, not at the top: importlib.metadata (and the email package it loads) is ~15 ms that every `ci-shards
    # run` without coverage would pay at start-up
    import importlib.metadata  # noqa: PLC0415

    try:
        return importlib.metadata.version("coverage")
    except importlib.metadata.PackageNotFoundError:
        return ""


_SQLITE_MAGIC: Final = b"SQLite format 3\x00"  # every SQLite 3 database's first 16 bytes (sqlite.org/fileformat.html)


def not_coverage_data(path: Path) -> str:
    """Why ``path`` is not a coverage.py data file ("" when it is one), checked without coverage.py:
    its reader takes an empty file, or a database of other tables, as empty data and writes its own
    schema into it, so a data file cut to 0 bytes would fold as "no line ran" (issue 20)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(len(_SQLITE_MAGIC))
        if head != _SQLITE_MAGIC:
            return f"{path.name}: not a coverage.py data file ({'empty' if not head else 'not SQLite'})"
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            db.execute("select version from coverage_schema").fetchone()
    except OSError as err:
        return f"{path.name}: cannot read: {err.strerror or err}"
    except sqlite3.Error as err:
        return f"{path.name}: not a coverage.py data file ({err})"
    return ""


def _python_problem(files: Sequence[Path]) -> str:
    from coverage import CoverageData  # noqa: PLC0415

    bad = []
    for path in files:
        try:
            if not_coverage_data(path):
                bad.append(path.name)
                continue
            data = CoverageData(basename=str(path))
            data.read()
            data.measured_files()
        except Exception:
            bad.append(path.name)
    return f"unreadable coverage data: {', '.join(bad)}" if bad else ""


def _v8_problem(files: Sequence[Path]) -> str:
    bad = []
    for path in files:
        try:
            json.loads(path.read_text(encoding="utf-8"))["result"]
        except (OSError, ValueError, KeyError, TypeError):
            bad.append(path.name)
    return f"unreadable V8 coverage: {', '.join(bad)}" if bad else ""


def data_files(tool: Tool, data_dir: Path) -> list[Path]:
    if not data_dir.is_dir():
        return []
    pattern = f"{DATA_STEM}*" if tool is Tool.COVERAGE_PY else "coverage-*.json"
    return sorted(p for p in data_dir.glob(pattern) if p.is_file())


def describe(
    tool: Tool, data_dir: Path, *, source_root: Path, request: CoverageRequest, launched: int
) -> dict[str, Any]:
    """outcome.json's ``coverage`` entry for what the run left in ``data_dir`` after ``launched`` test processes."""
    files = data_files(tool, data_dir)
    saved = len(list(data_dir.glob(f"{SAVED_STEM}*"))) if tool is Tool.COVERAGE_PY and data_dir.is_dir() else launched
    problem = ""
    with contextlib.suppress(OSError):
        if not files:
            problem = "no coverage data was written (the test process ended before saving it, or never started)"
        elif saved < launched:
            problem = (
                f"no coverage data was written by {launched - saved} of {launched} test processes "
                "(ended before coverage.py saved it: killed at the deadline?)"
            )
        else:
            problem = _python_problem(files) if tool is Tool.COVERAGE_PY else _v8_problem(files)
    return {
        "tool": tool.value,
        "version": _version(tool),
        "source_root": str(source_root.resolve()),
        "data": COVERAGE_DIR,
        "files": [p.name for p in files],
        "map": request.map and tool is Tool.COVERAGE_PY,
        "map_per": request.per,
        "problem": problem,
    }


@dataclass(frozen=True, kw_only=True)
class Collector:
    """One shard's coverage collection: the runner's only hook (environment, command, outcome entry)."""

    tool: Tool
    request: CoverageRequest
    data_dir: Path
    python: str

    def environment(self) -> dict[str, str]:
        return environment(self.tool, self.data_dir, self.request.per)

    def wrap(self, argv: Sequence[str]) -> list[str]:
        return wrap(argv, tool=self.tool, python=self.python, request=self.request)

    def describe(self, *, source_root: Path, launched: int) -> dict[str, Any]:
        return describe(self.tool, self.data_dir, source_root=source_root, request=self.request, launched=launched)


def start(
    request: CoverageRequest | None,
    *,
    command: Sequence[str],
    pytest: bool,
    python: str,
    shard_dir: Path,
    interpreter: Interpreter | None = None,
) -> Collector | None:
    """The collector for ``--coverage`` (None without it), checked and given a fresh data folder; ``interpreter``:
    the Python that runs ``--pytest``."""
    if request is None:
        return None
    tool = tool_for(command, pytest=pytest)
    check_available(tool, interpreter)
    return Collector(tool=tool, request=request, data_dir=prepare(shard_dir), python=python)


def entry_problem(entry: Mapping[str, Any] | None) -> str:
    """Why a shard's outcome entry gives no usable data ("" when it does)."""
    if not entry:
        return "ran without --coverage"
    return str(entry.get("problem") or "")


def listed_files(shard_dir: Path, entry: Mapping[str, Any]) -> tuple[list[Path], str]:
    """The data files outcome.json's entry names, and why they are not all there ("" when they are).

    Only the listed files are folded: a file the run did not list (left by another attempt, or copied in)
    is not this run's data, and a listed file that is gone (an upload that lost the folder, a cache that
    restored half of it) makes the shard's coverage lost, never a complete fold without it."""
    data = entry.get("data", COVERAGE_DIR)
    names = entry.get("files")
    if not isinstance(data, str) or not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return [], "outcome.json's coverage entry has no list of data files"
    bad = [n for n in (data, *names) if not n or n in {".", ".."} or PurePath(n).name != n]
    if bad:  # a name from the artifact (untrusted) must not reach outside the shard folder
        return [], f"outcome.json's coverage entry names a path, not a file in the folder: {bad[0]!r}"
    folder = shard_dir / data
    if not names:
        return [], "outcome.json lists no coverage data file"
    try:
        missing = [n for n in names if not (folder / n).is_file()]
    except OSError as err:  # is_file() raises for EACCES (a folder without x permission)
        return [], f"cannot read {folder}: {err.strerror or err}"
    if missing:
        listed = f"{len(missing)} of {len(names)} coverage data files listed in outcome.json"
        return [], f"{listed} are not in {folder}: {', '.join(missing[:3])}"
    return [folder / n for n in names], ""
