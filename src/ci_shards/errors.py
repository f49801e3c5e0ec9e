"""Every expected failure of ci-shards, each with its own exit code.

The exit codes are public API (DESIGN.md "Exit codes"); they are defined here and nowhere else,
and ``cli.main`` is the only place that turns an exception into one.
"""

from __future__ import annotations

from typing import Final

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1  # tests failed, or a shard did not pass
EXIT_USAGE: Final = 2  # usage, configuration or input error
EXIT_INTERNAL: Final = 3  # a bug in ci-shards
EXIT_INTERRUPTED: Final = 130


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


class CollectionError(CiShardsError):
    """Collecting the items failed (e.g. ``pytest --collect-only`` reported errors)."""


class TestsFailed(CiShardsError):
    """The run finished and its verdict is a failure (exit 1), after everything was reported."""

    __test__ = False  # not a pytest test class
    exit_code = EXIT_FAILED
