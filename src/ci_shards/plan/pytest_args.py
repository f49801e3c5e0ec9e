"""Reading pytest's command words without running pytest: which name paths, which ignore some.

The plan job (discovery) and ``ci-shards run`` (the unowned shard's test roots) both need the paths
among the words a user gives pytest. A word is a path when it names something on disk and is not
the value of an option: in ``--ignore numpy/f2py tests`` only ``tests`` is one. Pytest's own
options that take a value are listed here (pytest 9's ``--help``; ``--cov`` is pytest-cov's, whose
value is optional and, as argparse does, taken when the next word is not an option).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

VALUE_OPTIONS: Final = frozenset(
    {
        "-k", "-m", "-p", "-c", "-o", "-W", "-r",
        "--ignore", "--ignore-glob", "--deselect", "--rootdir", "--confcutdir", "--basetemp",
        "--config-file", "--inifile", "--override-ini", "--junitxml", "--junit-xml", "--junit-prefix",
        "--maxfail", "--tb", "--capture", "--import-mode", "--durations", "--durations-min", "--color",
        "--code-highlight", "--show-capture", "--pythonwarnings", "--log-level", "--log-format",
        "--log-date-format", "--log-cli-level", "--log-cli-format", "--log-cli-date-format", "--log-file",
        "--log-file-mode", "--log-file-level", "--log-file-format", "--log-file-date-format",
        "--log-disable", "--cov", "--cov-report", "--cov-config", "--cov-fail-under", "--cov-context",
        "--timeout", "--timeout-method", "--reruns", "--reruns-delay", "--splits", "--group",
        "--durations-path", "--splitting-algorithm", "-n", "--numprocesses", "--dist",
    }
)  # fmt: skip


def _takes_next(word: str, following: str | None) -> bool:
    if word not in VALUE_OPTIONS or following is None:
        return False
    return word != "--cov" or not following.startswith("-")  # --cov's value is optional


def positional_words(words: Sequence[str]) -> list[str]:
    """The words that are not options nor an option's value, in order: what pytest takes for its
    collection arguments (paths, node ids, ``--pyargs`` module names)."""
    found: list[str] = []
    skip_next = False
    for index, word in enumerate(words):
        if skip_next:
            skip_next = False
            continue
        following = words[index + 1] if index + 1 < len(words) else None
        if word.startswith("-"):
            skip_next = _takes_next(word, following)
        else:
            found.append(word)
    return found


def path_words(words: Sequence[str], cwd: Path) -> list[str]:
    """The words that name something on disk (``tests``, ``tests/test_a.py::test_x``), in order:
    what pytest would collect from. Options and their values (``-p no:randomly``,
    ``--ignore tests/slow``) name nothing."""
    return [word for word in positional_words(words) if (cwd / word.split("::", 1)[0]).exists()]


@dataclass(frozen=True)
class Ignores:
    """``--ignore`` paths and ``--ignore-glob`` patterns, absolute as pytest makes them."""

    paths: frozenset[str] = frozenset()
    globs: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.paths or self.globs)

    def ignores(self, path: Path) -> bool:
        """Pytest's rule (``_pytest.main.pytest_ignore_collect``): an exact path, or an fnmatch of the
        whole absolute path."""
        text = os.path.normpath(path)
        return text in self.paths or any(fnmatch.fnmatch(text, glob) for glob in self.globs)


NO_IGNORES: Final = Ignores()


def ignores_in(words: Sequence[str], cwd: Path) -> Ignores:
    """The ``--ignore``/``--ignore-glob`` options among ``words`` (``--ignore=X`` or ``--ignore X``),
    made absolute against ``cwd`` as pytest does."""
    paths: set[str] = set()
    globs: list[str] = []
    for index, word in enumerate(words):
        name, sep, value = word.partition("=")
        if name not in ("--ignore", "--ignore-glob"):
            continue
        if not sep:
            if index + 1 >= len(words):
                continue
            value = words[index + 1]
        absolute = os.path.normpath(cwd / value)
        if name == "--ignore":
            paths.add(absolute)
        else:
            globs.append(absolute)
    return Ignores(frozenset(paths), tuple(globs))
