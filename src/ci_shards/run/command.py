"""The shard's command line: template placeholders and splitting items into batches that fit the OS limit.

Placeholders in the command after ``--``:

- ``{items}`` (a whole argument) becomes the shard's items, one argument each;
- ``{items_file}`` (anywhere in an argument, e.g. ``@{items_file}`` for pytest >= 8.2) becomes the
  path of a file with one item per line;
- ``{junit}`` (anywhere in an argument) becomes the path the command must write its JUnit report to.

Pure functions: no files, no environment (the caller passes the sizes in).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Final

from ci_shards.common.console import listed, plural
from ci_shards.common.errors import UsageError

ITEMS: Final = "{items}"
ITEMS_FILE: Final = "{items_file}"
JUNIT: Final = "{junit}"
WINDOWS_COMMAND_LINE_MAX: Final = 32_767  # CreateProcess lpCommandLine limit, in characters
_POINTER: Final = 8  # each argv/envp entry also costs a pointer on the new process's stack
_SAFETY: Final = 4096  # auxv, the executable name, alignment
# Linux refuses any single argument (or environment string) longer than MAX_ARG_STRLEN =
# 32 * PAGE_SIZE = 131072 bytes, NUL included, whatever ARG_MAX allows (man7 execve(2), "Limits on
# size of arguments and environment"); the exec then fails with E2BIG
MAX_ARG_STRLEN: Final = 131_072


def uses_items(template: Sequence[str]) -> bool:
    return ITEMS in template or any(ITEMS_FILE in arg for arg in template)


def ids_warning(cut: Sequence[str], where: str) -> str:
    """Why a command given ``{items}`` may miss tests of the files the plan ``cut`` into test ids ("" when none):
    a test added to such a file since the timings were taken, or one its text does not define plainly, is named by no
    item, so no shard's command runs it and no report counts it, where ``run --pytest`` runs every test pytest
    collects (docs/planning.md, "Tests added after the plan"). A discovery plan cuts a file by its timed tests' ids
    to balance the shards, and deals every file by its tests' ids when nothing is timed."""
    if not cut:
        return ""
    verb = "is" if len(cut) == 1 else "are"
    return (
        f"{plural(len(cut), 'test file')}{where} {verb} cut into test ids ({listed(cut, shown=3)}): a command given"
        " {items} runs only the tests named, so a test added to such a file since the timings, or one the plan could"
        " not name from its text, runs in no shard and no report counts it; plan with --granularity file, or run with"
        " --pytest"
    )


def uses_junit(template: Sequence[str]) -> bool:
    return any(JUNIT in arg for arg in template)


def expand(template: Sequence[str], *, items: Sequence[str], items_file: str, junit: str) -> list[str]:
    argv: list[str] = []
    for arg in template:
        if arg == ITEMS:
            argv.extend(items)
        else:
            argv.append(arg.replace(ITEMS_FILE, items_file).replace(JUNIT, junit))
    return argv


def os_arg_limit() -> int:
    """Bytes available for argv + environment of a new process (ARG_MAX)."""
    if sys.platform == "win32":
        return WINDOWS_COMMAND_LINE_MAX
    try:
        value = os.sysconf("SC_ARG_MAX")
    except (ValueError, OSError):
        value = -1
    return value if value > 0 else 131_072  # POSIX's minimum guarantee is far lower; this is Linux's old value


def _size(word: str) -> int:
    """The bytes ``word`` is to the kernel: a byte of the command line that is not UTF-8 reaches Python as a lone
    surrogate (``-- mytool $'\\xff'``), which ``str.encode()`` refuses and ``os.fsencode`` turns back into it."""
    return len(os.fsencode(word))


def env_size(env: Mapping[str, str]) -> int:
    return sum(_size(k) + _size(v) + 2 + _POINTER for k, v in env.items())


def _arg_cost(arg: str) -> int:
    if sys.platform == "win32":
        return len(arg) + 3  # a separating space and possible quotes
    return _size(arg) + 1 + _POINTER


def batches(template: Sequence[str], items: Sequence[str], *, limit: int, environment_bytes: int) -> list[list[str]]:
    """Split ``items`` into consecutive runs whose expanded command line fits ``limit``.

    Only ``{items}`` grows the command line (``{items_file}`` is one path), so without it there is one
    batch. Every item lands in exactly one batch, in order. An item that cannot fit even alone is a
    usage error naming it.
    """
    _check_arg_lengths(template, items if ITEMS in template else ())
    if ITEMS not in template or not items:
        return [list(items)]
    fixed = sum(_arg_cost(a) for a in template if a != ITEMS) + 256  # room for the substituted paths
    # on POSIX the environment shares ARG_MAX with argv; Windows limits only the command line
    budget = limit - fixed - _SAFETY - (0 if sys.platform == "win32" else environment_bytes)
    result: list[list[str]] = []
    current: list[str] = []
    used = 0
    for item in items:
        cost = _arg_cost(item)
        if cost > budget:
            msg = f"item {item[:80]!r} alone does not fit the OS command-line limit ({limit} bytes); use {{items_file}}"
            raise UsageError(msg)
        if current and used + cost > budget:
            result.append(current)
            current, used = [], 0
        current.append(item)
        used += cost
    result.append(current)
    return result


def _check_arg_lengths(template: Sequence[str], items: Sequence[str]) -> None:
    """Every argument must fit Linux's per-argument limit (other systems have only the total)."""
    if not sys.platform.startswith("linux"):
        return
    for arg in template:
        if arg != ITEMS and _size(arg) >= MAX_ARG_STRLEN:
            msg = (
                f"command argument {arg[:80]!r}... is {_size(arg)} bytes, over Linux's per-argument limit"
                f" (MAX_ARG_STRLEN, {MAX_ARG_STRLEN} bytes)"
            )
            raise UsageError(msg)
    for item in items:
        if _size(item) >= MAX_ARG_STRLEN:
            msg = (
                f"item {item[:80]!r}... is {_size(item)} bytes, over Linux's per-argument limit"
                f" (MAX_ARG_STRLEN, {MAX_ARG_STRLEN} bytes): pass the items in a file with {ITEMS_FILE}"
                " (e.g. @{items_file} for pytest >= 8.2) or use --pytest"
            )
            raise UsageError(msg)
