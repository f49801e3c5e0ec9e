"""Reading pytest's command words without running pytest: which name paths, which ignore some.

The plan job (discovery) and ``ci-shards run`` (the unowned shard's test roots) both need the paths
among the words a user gives pytest. A word is a path when it names something on disk and is not
the value of an option: in ``--ignore numpy/f2py tests`` only ``tests`` is one. The options that take a
value are listed here: pytest 9's, pytest-xdist's, hypothesis' and the bundled plugin's (a test holds the list to
the parser pytest builds with them), and a few other plugins' (``--cov`` is pytest-cov's, whose value is
optional and, as argparse does, taken when the next word is not an option). And the words after
``--`` with ``--pytest`` are refused when they start with a command (``check_pytest_words``).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ci_shards.common.errors import UsageError

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
        # pytest's own that the list missed (`--doctest-glob README.rst tests` took README.rst for a path)
        "--doctest-glob", "--doctest-report", "--assert", "--verbosity", "--pdbcls", "--last-failed-no-failures",
        "--lfnf", "--pastebin", "--log-auto-indent", "--max-warnings", "--junitprefix", "--report-chars",
        # hypothesis' and pytest-xdist's, and the bundled plugin's
        "--hypothesis-profile", "--hypothesis-seed", "--hypothesis-verbosity", "--max-worker-restart",
        "--maxprocesses", "--maxschedchunk", "--tx", "--px", "--rsyncdir", "--rsyncignore", "--testrunuid",
        "--ci-shards-plan", "--ci-shards-shard", "--ci-shards-select", "--ci-shards-report", "--ci-shards-collect-to",
        "--ci-shards-ids-root",
        # pytest-rerunfailures' (16.7) beside --reruns and --reruns-delay
        "--only-rerun", "--rerun-except", "--rerun-exclude-path", "--force-reruns", "--max-suite-reruns",
        "--reruns-delay-backoff-factor", "--reruns-mode",
    }
)  # fmt: skip


def _takes_next(word: str, following: str | None) -> bool:
    if word not in VALUE_OPTIONS or following is None:
        return False
    return word != "--cov" or not following.startswith("-")  # --cov's value is optional


def _unvalued(words: Sequence[str]) -> Iterator[tuple[str, str | None]]:
    """Each word that is not an option's value, with the word after it."""
    skip_next = False
    for index, word in enumerate(words):
        if skip_next:
            skip_next = False
            continue
        following = words[index + 1] if index + 1 < len(words) else None
        yield word, following
        skip_next = word.startswith("-") and _takes_next(word, following)


def positional_words(words: Sequence[str]) -> list[str]:
    """The words that are not options nor an option's value, in order: what pytest takes for its
    collection arguments (paths, node ids, ``--pyargs`` module names)."""
    return [word for word, _ in _unvalued(words) if not word.startswith("-")]


def path_words(words: Sequence[str], cwd: Path) -> list[str]:
    """The words that name something on disk (``tests``, ``tests/test_a.py::test_x``), in order:
    what pytest would collect from. Options and their values (``-p no:randomly``,
    ``--ignore tests/slow``) name nothing."""
    return [word for word in positional_words(words) if (cwd / word.split("::", 1)[0]).exists()]


@dataclass(frozen=True)
class Ignores:
    """``--ignore`` paths and ``--ignore-glob`` patterns, absolute as pytest makes them; ``venvs``: whether a
    folder holding a virtualenv is left out too (pytest's default; ``--collect-in-virtualenv`` keeps it)."""

    paths: frozenset[str] = frozenset()
    globs: tuple[str, ...] = ()
    venvs: bool = True

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
    made absolute against ``cwd`` as pytest does, and whether ``--collect-in-virtualenv`` is not among them."""
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
    return Ignores(frozenset(paths), tuple(globs), venvs="--collect-in-virtualenv" not in words)


def _value_of(word: str, following: str | None, name: str) -> str | None:
    """The value ``word`` gives option ``name``, as argparse reads it: ``-m EXPR`` / ``-mEXPR`` for a short
    option, ``--opt VALUE`` / ``--opt=VALUE`` for a long one; None when ``word`` is not that option (or it
    ends the words)."""
    if word == name:
        return following
    attached = f"{name}=" if name.startswith("--") else name
    if word.startswith(attached) and (len(word) > len(attached) or attached.endswith("=")):
        return word[len(attached) :]
    return None


def last_value(words: Sequence[str], *names: str) -> str:
    """The value of the last of the options ``names`` among ``words`` (``-m``, ``-k``,
    ``--hypothesis-profile``; ``-n`` and ``--numprocesses`` together), as pytest's parser keeps the last;
    ``""`` when none (an option's value is not read as one)."""
    values = every_value(words, *names)
    return values[-1] if values else ""


def every_value(words: Sequence[str], *names: str) -> list[str]:
    """The values of every one of the options ``names`` among ``words``, in order (``-o``, which pytest keeps
    each of: ``-o python_files=x -o testpaths=y``)."""
    values = []
    for word, following in _unvalued(words):
        for name in names:
            found = _value_of(word, following, name)
            if found is not None:
                values.append(found)
    return values


# the options by which the user decides pytest's rootdir or settings file (determine_setup's inputs) themselves
ROOTDIR_OPTIONS: Final = ("--rootdir", "-c", "--config-file", "--inifile")


def names_rootdir_or_config(words: Sequence[str]) -> bool:
    """Whether ``words`` give pytest's rootdir or settings file (``ROOTDIR_OPTIONS``, ``--opt=value`` too)."""
    return any(word.startswith(ROOTDIR_OPTIONS) for word in words)


def env_addopts(env: Mapping[str, str]) -> list[str]:
    """The words of ``PYTEST_ADDOPTS``, which pytest puts between its ini file's addopts and the command line's
    words; a value shlex cannot split (an open quote) is a ``UsageError`` naming it."""
    try:
        return shlex.split(env.get("PYTEST_ADDOPTS", ""))
    except ValueError as err:
        msg = f"PYTEST_ADDOPTS: cannot split it into words as pytest does ({err})"
        raise UsageError(msg) from None


# -x among pytest's short flags run together (-xvs), as argparse reads them (in -rx or -px, x is -r's or -p's value)
_SHORT_FLAGS_WITH_X: Final = re.compile(r"-[vqslx]*x[vqslx]*")


def maxfail_in(words: Sequence[str]) -> str:
    """What makes pytest stop after failures among ``words``: ``-x`` (as given, e.g. ``-xvs``), ``--exitfirst``
    or ``--maxfail=N``, the last one as argparse keeps it; "" when none does or the last is ``--maxfail=0``."""
    found = ""
    for word, following in _unvalued(words):
        maxfail = _value_of(word, following, "--maxfail")
        if word == "--exitfirst" or _SHORT_FLAGS_WITH_X.fullmatch(word):
            found = word
        elif maxfail is not None:
            found = "" if maxfail.strip() in ("", "0") else f"--maxfail={maxfail}"
    return found


def xdist_workers_in(words: Sequence[str]) -> str:
    """pytest-xdist's worker count among ``words`` (``-n 4``, ``-n4``, ``-n auto``, ``--numprocesses=auto``),
    the last one given; "" when none is, or the last is 0 (xdist off)."""
    value = last_value(words, "-n", "--numprocesses")
    return "" if value.strip() == "0" else value


# the first word of a pytest-split habit (`-- pytest tests/`, `-- python -m pytest`): with --pytest,
# ci-shards runs pytest itself and the words after -- are pytest's options and paths
_RUNNER_WORD = re.compile(r"(py\.?test|python[\d.]*)(\.exe)?")


# pytest's options after which it runs no test (pytest 9.2: main.py, setuponly.py, setupplan.py, fixtures.py,
# mark/, cacheprovider.py, helpconfig.py; its parser takes no abbreviation). Each shard's pytest would exit 0
# having run nothing: --setup-plan and --setup-only report every test passed.
NO_TEST_OPTIONS: Final = {
    "--collect-only": "only collect the tests",
    "--co": "only collect the tests",
    "--setup-only": "only set up the fixtures",
    "--setup-plan": "only show the fixtures each test would set up",
    "--fixtures": "list the fixtures",
    "--funcargs": "list the fixtures",
    "--fixtures-per-test": "list each test's fixtures",
    "--markers": "list the markers",
    "--cache-show": "show its cache",
    "--version": "print its version",
    "-V": "print its version",
    "--help": "print its help",
    "-h": "print its help",
}


# pytest's options that choose tests by its cache of the last run (cacheprovider.py, stepwise.py): a subset
# of the collection, and, where the subset holds no recorded failure, every test of it
CACHE_SELECTIONS: Final = ("--lf", "--last-failed", "--sw", "--stepwise", "--sw-skip", "--stepwise-skip")


def check_no_cache_selection(words: Sequence[str]) -> None:
    """Refuse ``--lf``/``--sw`` for a discovery plan: it does not read pytest's cache, and each shard's pytest,
    applying them to its own files alone, runs every test of a shard whose files hold no recorded failure,
    where plain pytest runs the failures only. A ``--pytest`` collection asks pytest, which applies them."""
    for word, _following in _unvalued(words):
        if word in CACHE_SELECTIONS:
            msg = (
                f"{word!r} chooses tests by pytest's cache of the last run, which a discovery plan does not read"
                " (each shard would run every test of its files where none failed): plan by pytest's own"
                " collection instead (--pytest without --discover; the action's discover: false)"
            )
            raise UsageError(msg)


# `-p no:NAME` for the plugin's entry-point name (pyproject's pytest11) or its module: pytest then never loads it
PLUGIN_BLOCKS: Final = ("no:ci_shards", "no:ci_shards.pytest_plugin")


def _blocks_the_plugin(word: str, following: str | None) -> bool:
    """``-p no:ci_shards`` (also ``-pno:ci_shards``), as pytest's own parser reads ``-p``."""
    value = following if word == "-p" else word[2:] if word.startswith("-p") and not word.startswith("--") else None
    return value is not None and value.strip() in PLUGIN_BLOCKS


# `-p no:NAME` for pytest-xdist's entry-point name or its plugin module: `-n` is then an unknown option
XDIST_BLOCKS: Final = ("no:xdist", "no:xdist.plugin")


def xdist_blocked(words: Sequence[str]) -> str:
    """``-p no:xdist`` as ``words`` (addopts, PYTEST_ADDOPTS, the arguments) give it, when pytest given them never
    loads pytest-xdist; "" otherwise."""
    blocks = [value.strip() for value in every_value(words, "-p") if value.strip() in XDIST_BLOCKS]
    return f"-p {blocks[-1]}" if blocks else ""


def check_pytest_words(words: Sequence[str], cwd: Path | None = None) -> None:
    """Refuse ``--pytest -- pytest tests/``: pytest would take ``pytest`` for a path and fail, or worse.
    A folder of that name in ``cwd`` (a suite under ``pytest/``) is a path, and fine. Refuse an option
    after which pytest runs no test (``NO_TEST_OPTIONS``): every shard would pass, none having run; and
    ``-p no:ci_shards``, without which no shard can select its tests."""
    if words and _RUNNER_WORD.fullmatch(Path(words[0]).name) and not (cwd is not None and (cwd / words[0]).is_dir()):
        msg = (
            f"--pytest runs pytest itself; the words after -- are pytest options and paths, so {words[0]!r} is"
            " misuse: drop it (e.g. `--pytest -- tests/ -x`), or leave out --pytest to run a command of your own"
        )
        raise UsageError(msg)
    for word, following in _unvalued(words):
        name = word.partition("=")[0] if word.startswith("--") else word
        if _blocks_the_plugin(word, following):
            msg = (
                f"'-p {PLUGIN_BLOCKS[0]}' stops pytest from loading the ci-shards plugin, which selects each"
                " shard's tests and reports them: drop it"
            )
            raise UsageError(msg)
        if name in NO_TEST_OPTIONS:
            msg = (
                f"{word!r} makes pytest {NO_TEST_OPTIONS[name]} and run no test, so every shard would pass having"
                " run nothing: drop it (`ci-shards plan --pytest` writes the tests a plan holds)"
            )
            raise UsageError(msg)
