"""Where a command's product goes when the user names it with ``-o``/``--output``/``--*-out``: a file, its
missing parent folders created, or ``-`` for stdout. One rule for every subcommand (a test walks the parser)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

from ci_shards.errors import InputError

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
    """``text`` to the file ``path`` (parents created), or to stdout when ``path`` is ``-``."""
    if is_stdout(path):
        sys.stdout.write(text)
        return
    make_parent(path)
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as err:
        raise InputError(path, f"cannot write: {err.strerror or err}") from None
