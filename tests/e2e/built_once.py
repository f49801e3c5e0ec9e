"""``built_once``: a read-only folder (an npm install, a venv) built once per test session, however many
pytest-xdist workers ask for it.

A session-scoped fixture is built once per *worker* (tests/README.md, "Running in parallel"), so two workers
that each run a test needing ``node_modules`` would each pay a whole ``npm install``. The folder is built
instead under the session's shared temporary folder, the parent of every worker's ``basetemp``, behind a
file lock: the first worker builds it, the others wait and reuse it. This is pytest-xdist's documented recipe
for "making session-scoped fixtures execute only once"
(https://pytest-xdist.readthedocs.io/en/stable/how-to.html), with ``fcntl.flock`` for its ``filelock``.
Without xdist the session's own ``basetemp`` is used: its parent (``pytest-of-<user>``) outlives the run,
and a folder there could be stale.

Tests must not write into the folder: they link to it or copy what they change.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name``, built by ``build(folder)`` by the first worker of this session that asks.

    ``build`` fills an empty folder; a build that raises (``pytest.skip`` included) leaves nothing behind, so
    the next worker that asks tries again and reports the same reason itself."""
    return built_in(session_folder(factory), name, build)


def session_folder(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder every worker of this session shares (the session's own without xdist)."""
    shared = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the session's folder, shared by every worker of this run
    return shared


def built_in(shared: Path, name: str, build: Callable[[Path], None]) -> Path:
    """``shared``/``name``, built by ``build(folder)`` by the first process that asks, behind a file lock in
    ``shared``; the others wait and reuse it (also outside pytest: benchmarks/act_run.py)."""
    shared.mkdir(parents=True, exist_ok=True)
    target = shared / name
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if this process dies
        if not target.is_dir():
            building = shared / f"{name}.building-{os.getpid()}"
            building.mkdir()
            try:
                build(building)
            except BaseException:
                shutil.rmtree(building, ignore_errors=True)
                raise
            building.rename(target)  # whole or absent: a worker never sees half a build
    return target
