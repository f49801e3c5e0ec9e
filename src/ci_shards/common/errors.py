"""Every expected failure of ci-shards, each with its own exit code.

The exit codes are public API (README.md, "Exit codes"); they are defined here and nowhere else,
and ``cli.main`` is the only place that turns an exception into one.
"""

from __future__ import annotations

import json
from typing import Final

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1  # tests failed, or a shard did not pass
EXIT_USAGE: Final = 2  # usage, configuration or input error
EXIT_INTERNAL: Final = 3  # a bug in ci-shards
EXIT_INTERRUPTED: Final = 130


def as_written(value: object, limit: int = 80) -> str:
    """A value from a user's JSON/YAML/TOML file as it reads there (``null``, ``true``, ``"x"``, ``[1, 2]``),
    for error messages: never Python's spelling (``None``, ``True``) or its type names (``NoneType``)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # a YAML/TOML date and the like
        text = json.dumps(str(value), ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def kind_of(value: object) -> str:
    """What a JSON/YAML value is, in those formats' words: "a list", "a number", "null"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "a value of another kind"


def why_unreadable(err: Exception) -> str:
    """What a parser's refusal says, in a reader's words: a ``RecursionError`` (a document nested deeper than the
    parser's recursion allows: YAML, TOML) as that, a ``ValueError`` (a TOML/YAML syntax error, an integer of more
    digits than Python converts, an impossible date) by its own first clause."""
    if isinstance(err, RecursionError):
        return "nested too deeply to read"
    return str(err).split(";")[0]


class CiShardsError(Exception):
    """An expected failure: ``cli.main`` prints ``str(err)`` on one line and exits with ``exit_code``."""

    exit_code: int = EXIT_USAGE


class UsageError(CiShardsError):
    """A bad flag or a bad combination of flags."""


class ConfigError(CiShardsError):
    """A bad ci-shards.yml / [tool.ci-shards] (unknown key, wrong type)."""


class InputError(CiShardsError):
    """A file given to us is missing, unreadable or malformed. The message names the file."""

    def __init__(self, path: object, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class TestsFailed(CiShardsError):
    """The run finished and its verdict is a failure (exit 1), after everything was reported."""

    __test__ = False  # not a pytest test class
    exit_code = EXIT_FAILED


class CollectionError(CiShardsError):
    """Collecting the items failed (e.g. ``pytest --collect-only`` reported errors)."""
