"""``plan --pytest``: pytest's node ids, recorded in-process by the bundled plugin, never parsed from its output.

pytest runs ``--collect-only`` with ``--ci-shards-collect-to FILE``; the plugin writes every collected
item's node id and file, pytest's rootdir and each failed collector to FILE. Whatever output options
(``-q``, ``-v``, ``-rA``, ``--tb``), plugins or ``addopts`` the project uses, the ids are pytest's own.

The ids are pytest's node ids as they are (as in ``.test_durations`` and JUnit reports): relative to
pytest's rootdir, or for a file outside it (a package run with ``--pyargs`` from another folder)
relative to the collection argument that holds it; a module that is itself such an argument, which pytest names
"" (``::test_a``), by its path from the rootdir, as the shards name it. The plan records that rootdir relative to the
working directory, so a shard job with its checkout elsewhere finds the same files.
``read_collection`` (pure) refuses a collection that could not be run again by id: a failed collector,
an id whose file part does not name its file (an id collected more than once is planned once), and a pytest
that exited non-zero, unless a plugin's check at the session's end alone failed it after a clean collection. A
failed collector is no refusal where the same pytest, run for its tests, goes on past it (the plugin records
``runs_past_errors``: ``--continue-on-collection-errors``, or pytest-xdist, whose workers collect and run the rest):
then the plan is the tests collected, and the shard that walks unowned files reports the error (conformance run 10).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ci_shards.common.console import plural
from ci_shards.common.errors import CollectionError
from ci_shards.common.interpreter import default_python, plugin_env, probe
from ci_shards.model.matching import item_file

PYTEST_NO_TESTS: Final = 5  # pytest's ExitCode.NO_TESTS_COLLECTED
_PYTEST_EXITS: Final = {2: "interrupted", 3: "internal error", 4: "usage error"}


@dataclass(frozen=True)
class Collection:
    ids: list[str]  # node ids relative to ``rootdir``, in pytest's order
    rootdir: str  # absolute
    paths: dict[str, str] = field(default_factory=dict)  # an id's file part → its file (absolute)
    deselected: dict[str, int] = field(default_factory=dict)  # file part → tests collected but deselected
    # the failed collectors of a pytest that runs past them (--continue-on-collection-errors, pytest-xdist): their
    # one-line reasons, "where: message"; the plan is the tests it collected, and the shards report the errors
    errors_run_past: tuple[str, ...] = ()

    def run_past_note(self) -> str:
        """The plan's note on the collection errors pytest runs past ("" for none): planned around, not hidden."""
        errors = self.errors_run_past
        if not errors:
            return ""
        more = f" and {len(errors) - 1} more" if len(errors) > 1 else ""
        return (
            f"pytest's collection reported {plural(len(errors), 'error')} ({errors[0]}{more}), which it runs past"
            " with these arguments (--continue-on-collection-errors, or pytest-xdist): the plan has the tests it"
            " collected, and the shards report each error as plain pytest does"
        )


def error_line(output: str) -> str:
    """The line of pytest's output that says what went wrong (``module or package not found: x``,
    ``unrecognized arguments: --y``), else its last line; ``""`` for no output."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower() and not line.startswith("ERROR: usage:")]
    line = (errors or lines or [""])[-1]
    return line.removeprefix("ERROR: ")[:500]


def read_collection(record: Mapping[str, Any], *, exit_code: int, output: str = "") -> Collection:
    """The ids of the plugin's record, or a ``CollectionError`` naming the first problem (``output``:
    pytest's stderr, for a failure no collector reported)."""
    errors = record.get("errors") or []
    runs_past = bool(errors) and bool(record.get("runs_past_errors"))
    if errors and not runs_past:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        msg = (
            f"pytest collection failed (exit {exit_code}) in {first.get('id') or 'the session'}:"
            f" {first.get('message', '')}{more}; no plan was made"
        )
        raise CollectionError(msg)
    # pytest --collect-only exits 1 past its collection errors (2 under pytest-xdist, inert while collecting)
    excused = runs_past and exit_code in (1, 2)
    if exit_code not in (0, PYTEST_NO_TESTS) and not excused and not _failed_after_collection(record, exit_code):
        said = f": {error_line(output)}" if error_line(output) else ""
        kind = _PYTEST_EXITS.get(exit_code, "error")
        msg = f"pytest collection failed (exit {exit_code}, {kind}){said}; no plan was made"
        raise CollectionError(msg)
    rootdir = str(record["rootdir"])
    ids: list[str] = []
    paths: dict[str, str] = {}
    seen: set[str] = set()
    for item in record.get("items", ()):
        path = str(item["path"])
        node_id = with_file_named(str(item["id"]), path, rootdir)
        if node_id in seen:  # items sharing a node id: planned once, the shard that runs it runs them all
            continue
        seen.add(node_id)
        if not node_id or not names_its_file(item_file(node_id), path, rootdir):
            msg = (
                f"pytest node id {node_id!r} does not name its file {path} (by its path relative to rootdir"
                f" {rootdir} or to a collection argument), so a shard could not select it again; no plan was made"
            )
            raise CollectionError(msg)
        ids.append(node_id)
        paths.setdefault(item_file(node_id), path)
    deselected = {str(f): int(n) for f, n in (record.get("deselected") or {}).items()}
    run_past = tuple(f"{e.get('id') or 'the session'}: {e.get('message', '')}" for e in errors)
    return Collection(ids=ids, rootdir=rootdir, paths=paths, deselected=deselected, errors_run_past=run_past)


def _failed_after_collection(record: Mapping[str, Any], exit_code: int) -> bool:
    """Whether pytest collected cleanly and a plugin's session-end check alone made it exit 1: the record's
    ``exitstatus`` is the one pytest handed ``pytest_sessionfinish``, before any plugin changed it. syrupy's
    unused-snapshot check does so under ``--collect-only`` (no test ran, so every snapshot is unused: plain
    ``pytest --collect-only`` exits 1 on syrupy 7.0.1's own suite), which says nothing about the collection."""
    return exit_code == 1 and record.get("exitstatus") in (0, PYTEST_NO_TESTS)


def with_file_named(node_id: str, path: str, rootdir: str) -> str:
    """``node_id`` with its file named when pytest left it unnamed: a module that is itself a collection argument
    outside the rootdir is named "" (``--pyargs pkg.tests.test_x`` from another folder: ``::test_a``, the same id
    for the tests of two such modules), and no shard could select it again by that. The shards' plugin names such
    a file by its path from the rootdir (``pytest_plugin._ShardState.path_id``), so the plan does too."""
    if not node_id.startswith("::"):
        return node_id
    return Path(os.path.relpath(path, rootdir)).as_posix() + node_id


def names_its_file(file_part: str, path: str, rootdir: str) -> bool:
    """Whether a node id's file part names ``path``: relative to ``rootdir``, or, for a file outside it,
    relative to the collection argument that holds it, as pytest names it (a ``--pyargs`` package
    installed elsewhere: ``tests/test_x.py`` for ``site-packages/pkg/sub/tests/test_x.py``), or through a symlink."""
    if os.path.normpath(os.path.join(rootdir, file_part)) == os.path.normpath(path):
        return True
    part = Path(os.path.normpath(file_part)).parts
    if bool(part) and ".." not in part and Path(os.path.normpath(path)).parts[-len(part) :] == part:
        return True
    # a file reached through a symlinked folder (pytest follows those and names the file by the link,
    # tests/linked/test_r.py); ``path`` is the file the recorder resolved, so the id's file resolved must be it
    return os.path.realpath(os.path.join(rootdir, file_part)) == os.path.normpath(path)


def portable_rootdir(rootdir: str, cwd: Path) -> str:
    """The rootdir as plan.json stores it: POSIX, relative to the working directory (``.`` when equal)."""
    return Path(os.path.relpath(rootdir, cwd.resolve())).as_posix()


def collect_pytest(args: Sequence[str], *, cwd: Path, env: Mapping[str, str], python: str | None = None) -> Collection:
    """Run ``python -m pytest --collect-only`` with the recording plugin in ``cwd``; ``python``: ``--python``
    (interpreter.default_python chooses when None)."""
    interpreter = probe(default_python(python, env), env)
    with tempfile.TemporaryDirectory(prefix="ci-shards-collect-") as scratch:
        record_path = Path(scratch) / "collection.json"
        env = plugin_env(interpreter, env, Path(scratch) / "plugin")
        # the =form: a free-standing path argument would take part in pytest's rootdir search
        command = [
            interpreter.path,
            "-m",
            "pytest",
            "--collect-only",
            "-p",
            "ci_shards",
            f"--ci-shards-collect-to={record_path}",
            *args,
        ]
        try:
            done = subprocess.run(command, cwd=cwd, env=dict(env), capture_output=True, text=True, check=False)
        except OSError as err:
            msg = f"cannot run pytest for collection: {err}"
            raise CollectionError(msg) from None
        if not record_path.exists():
            said = f": {error_line(done.stderr or done.stdout)}" if (done.stderr or done.stdout).strip() else ""
            msg = (
                f"pytest collection failed (exit {done.returncode}) before the ci-shards plugin recorded"
                f" anything{said}; no plan was made"
            )
            raise CollectionError(msg)
        record = json.loads(record_path.read_text(encoding="utf-8"))
    return read_collection(record, exit_code=done.returncode, output=done.stderr)
