"""Finding the items to plan: an explicit list, globs, ``pytest --collect-only``, a timings file.

A source that fails never yields a smaller plan: a missing list file, a glob that matches nothing
and a pytest collection error all stop planning with the reason. The parsing parts
(``parse_item_lines``, ``parse_pytest_collect``) are pure; the rest reads files or runs pytest.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, TextIO

from ci_shards.errors import CollectionError, InputError
from ci_shards.globs import match_files

TAIL_LINES: Final = 30  # of pytest's output shown when collection fails
PYTEST_NO_TESTS: Final = 5  # pytest's exit code "no tests were collected" (pytest ExitCode.NO_TESTS_COLLECTED)


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
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise InputError(source, f"cannot read the items list: {reason}") from None


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


def parse_pytest_collect(stdout: str) -> list[str]:
    """Node ids from ``pytest --collect-only -q``: the lines before the first blank line."""
    items = []
    for line in stdout.splitlines():
        if not line.strip():
            break
        if line.startswith(("<", " ", "=")):  # a verbose tree or a banner: not a node id
            continue
        items.append(line.strip())
    return items


def collect_pytest(args: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> list[str]:
    """Run ``python -m pytest --collect-only -q ARGS`` in ``cwd`` and return the node ids."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", *args]
    try:
        done = subprocess.run(command, cwd=cwd, env=dict(env), capture_output=True, text=True, check=False)
    except OSError as err:
        msg = f"cannot run pytest for collection: {err}"
        raise CollectionError(msg) from None
    if done.returncode == PYTEST_NO_TESTS:
        return []
    output = (done.stdout + done.stderr).rstrip().splitlines()
    if done.returncode != 0:
        tail = "\n".join(output[-TAIL_LINES:])
        msg = f"pytest collection failed (exit {done.returncode}); no plan was made:\n{tail}"
        raise CollectionError(msg)
    return parse_pytest_collect(done.stdout)
