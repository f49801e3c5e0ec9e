"""Finding the items to plan: an explicit list, globs (``pytest --collect-only`` is ``pytest_collect``).

A source that fails never yields a smaller plan: a missing list file or a glob that matches nothing
stops planning with the reason. ``parse_item_lines`` is pure; the rest reads files.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ci_shards.common.errors import InputError
from ci_shards.common.globs import match_files


def parse_item_lines(text: str) -> list[str]:
    """One item per line; blank lines and ``#`` comments are ignored, surrounding space stripped."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def read_items(source: str, *, cwd: Path, stdin: TextIO | None = None) -> list[str]:
    """Items from a file (relative to ``cwd``), or from standard input when ``source`` is ``-``."""
    if source == "-":
        return parse_item_lines((stdin or sys.stdin).read())
    path = cwd / source
    try:
        return parse_item_lines(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:  # as every other input file says it, not the codec's message
        raise InputError(source, f"not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise InputError(source, f"cannot read the items list: {err.strerror or err}") from None


def glob_items(patterns: Sequence[str], *, cwd: Path) -> list[str]:
    """Files matching each pattern (``**`` recurses), as POSIX paths relative to ``cwd``."""
    found: set[str] = set()
    for pattern in patterns:
        if Path(pattern).is_absolute():
            msg = f"--glob {pattern!r}: use a pattern relative to the working directory"
            raise InputError(pattern, msg)
        matches = [Path(hit).as_posix() for hit in match_files(pattern, cwd=cwd)]
        if not matches:
            raise InputError(pattern, f"--glob matched no files under {cwd}")
        found.update(matches)
    return sorted(found)


def expand_files(patterns: Sequence[str], *, cwd: Path) -> list[str]:
    """Input files named by globs (relative to ``cwd`` or absolute; ``**`` recurses), each pattern
    matching at least one file."""
    found: set[str] = set()
    for pattern in patterns:
        matches = [str(cwd / hit) for hit in match_files(pattern, cwd=cwd)]
        if not matches:
            raise InputError(pattern, f"matched no files under {cwd}")
        found.update(matches)
    return sorted(found)
