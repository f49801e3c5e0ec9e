"""Where a command's product goes when the user names it with ``-o``/``--output``/``--*-out``: a file, its
missing parent folders created, or ``-`` for stdout. One rule for every subcommand (a test walks the parser).

Every file one stage hands to the next (plan.json, the matrix files, outcome.json, junit.xml,
failures.jsonl, the timings store, coverage.json, the merged JUnit) is written through ``atomic``: a
temp file in the same folder, fsynced, then renamed over the target (``os.replace``, atomic on POSIX
within one file system), so a job killed mid-write leaves the old file or the new one, never half of
one that the next stage would read as complete.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final, TextIO

from ci_shards.common.errors import InputError

STDOUT: Final = "-"


def is_stdout(path: str | Path | None) -> bool:
    return path is not None and str(path) == STDOUT


def describe(path: str | Path) -> str:
    """How a message names the destination: ``stdout`` rather than a bare ``-``."""
    return "stdout" if is_stdout(path) else str(path)


def file_in_the_way(path: str | Path) -> Path | None:
    """The nearest of ``path``'s parents that is a regular file: what makes creating ``path`` fail with a bare
    ``File exists`` or ``Not a directory`` (``-o notes.txt/plan.json``)."""
    for parent in reversed(Path(path).parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return None


def folder_error(path: str | Path, err: OSError) -> str:
    """Why ``path``'s folder could not be made: a file in the way is named, else the system's words."""
    blocker = file_in_the_way(path)
    if blocker is not None:
        return f"cannot create its folder: {blocker} is a file, not a folder"
    return f"cannot create its folder: {err.strerror or err}"


def make_parent(path: str | Path) -> None:
    """Create ``path``'s missing parent folders (``-o new/dir/plan.json`` works, as ``junit merge -o`` always did)."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(path, folder_error(path, err)) from None


def write_output(path: str | Path, text: str) -> None:
    """``text`` to the file ``path`` (parents created, written atomically), or to stdout when ``path`` is ``-``."""
    if is_stdout(path):
        sys.stdout.write(text)
        return
    write_atomic(path, text)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic(path: str | Path) -> Iterator[TextIO]:
    """A text handle (UTF-8, ``\n`` line ends) whose content becomes ``path`` only when the block ends
    without an error; until then, and after a failure, ``path`` is as it was. Parents are created; an
    ``OSError`` (disk full, no permission) becomes an ``InputError`` naming ``path``."""
    target = Path(path)
    make_parent(target)  # a file in the way is named (folder_error), not a bare "Not a directory"
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as err:
        raise InputError(path, f"cannot write: {err.strerror or err}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())  # the bytes are on disk before the name points at them
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's 0600 would hide the file from the job that reads it
        os.replace(tmp, target)
    except OSError as err:
        _remove(tmp)
        raise InputError(path, f"cannot write: {err.strerror or err}") from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def write_atomic(path: str | Path, text: str) -> None:
    """``text`` to the file ``path`` through ``atomic``."""
    with atomic(path) as handle:
        handle.write(text)
