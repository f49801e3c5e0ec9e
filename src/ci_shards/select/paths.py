"""Path globs over repository paths (POSIX, relative to the repository root). Pure.

``*`` stays within one folder, ``**`` crosses folders, and a pattern without a ``/`` matches a file's
name in any folder (``conftest.py``, ``*.lock``), the way ``.gitignore`` reads such patterns.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable


@functools.lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    body = pattern.strip("/")
    if "/" not in body:
        body = "**/" + body
    out: list[str] = []
    index = 0
    while index < len(body):
        if body.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif body.startswith("**", index):
            out.append(".*")
            index += 2
        elif body[index] == "*":
            out.append("[^/]*")
            index += 1
        elif body[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(body[index]))
            index += 1
    # a folder pattern (``tests/data``) also matches everything under it
    return re.compile("".join(out) + "(?:/.*)?")


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
SHOWN_LIMIT = 300


def shown(path: str) -> str:
    """A path as written into a one-line message: git allows newlines and escapes in file names, and a pull
    request's author picks them, so control characters become ``\\xNN`` (no forged line, no workflow
    command) and the name is capped."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", path)
    return text if len(text) <= SHOWN_LIMIT else text[: SHOWN_LIMIT - 1] + "…"


def matches(path: str, pattern: str) -> bool:
    return _compile(pattern).fullmatch(path) is not None


def first_match(path: str, patterns: Iterable[str]) -> str | None:
    """The first pattern that matches ``path``, or None."""
    return next((p for p in patterns if matches(path, p)), None)
