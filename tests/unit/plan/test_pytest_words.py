"""plan/pytest_args.py's list of the options that take a value, held to the parser pytest itself builds (with this
venv's plugins: pytest-xdist, hypothesis, pytest-split and the bundled one): a value taken for a path narrows
discovery to it, or widens the unowned shard's walk."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.config import _prepareconfig

from ci_shards.plan.pytest_args import VALUE_OPTIONS, last_value, path_words, xdist_workers_in


def _options_with_a_value() -> set[str]:
    """Every option string of pytest's parser whose value is not optional (argparse's nargs)."""
    config = _prepareconfig(["--version"])  # parsed with every plugin's options, no session run
    parser = config._parser
    names: set[str] = set()
    for group in [parser._anonymous, *parser._groups]:
        for option in group.options:
            if option.attrs()["nargs"] not in (0, "?", "*"):  # a flag, or a value argparse may leave off
                names.update(option.names())
    return names


def test_every_option_pytest_and_its_plugins_give_a_value_is_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)  # the suite's own leaves hypothesis' plugin out (conftest)
    found = _options_with_a_value()
    assert {"--doctest-glob", "-k", "--hypothesis-profile", "--dist"} <= found  # the parser was read
    assert sorted(found - VALUE_OPTIONS) == []


def test_the_value_of_doctest_glob_is_no_path(tmp_path: Path) -> None:
    (tmp_path / "README.rst").write_text(">>> 1\n1\n")
    (tmp_path / "tests").mkdir()
    words = ["--doctest-glob", "README.rst", "tests", "--hypothesis-profile", "ci", "-p", "no:randomly"]
    (tmp_path / "ci").mkdir()  # a folder named as the profile: still the option's value
    assert path_words(words, tmp_path) == ["tests"]


@pytest.mark.parametrize(
    ("words", "workers"),
    [
        (["-n", "4"], "4"),
        (["-n4", "-v"], "4"),
        (["--numprocesses=auto"], "auto"),
        (["--numprocesses", "logical"], "logical"),
        (["-n", "auto", "-n", "0"], ""),  # the last wins: 0 is xdist off
        (["-k", "-n", "tests"], ""),  # -n as -k's value
        (["--no-header", "tests"], ""),
    ],
)
def test_xdist_workers_in_the_words(words: list[str], workers: str) -> None:
    assert xdist_workers_in(words) == workers


@pytest.mark.parametrize(
    ("words", "names", "value"),
    [
        (["-m", "slow", "-mfast"], ("-m",), "fast"),
        (["--hypothesis-profile=ci"], ("--hypothesis-profile",), "ci"),  # was "=ci": the profile was never found
        (["--hypothesis-profile", "ci", "--hypothesis-profile=dev"], ("--hypothesis-profile",), "dev"),
        (["--hypothesis-profiles", "x"], ("--hypothesis-profile",), ""),  # another option's name, not its value
        (["-n4", "--numprocesses=auto"], ("-n", "--numprocesses"), "auto"),
        (["-m"], ("-m",), ""),
    ],
)
def test_last_value_reads_short_and_long_options_as_argparse_does(
    words: list[str], names: tuple[str, ...], value: str
) -> None:
    assert last_value(words, *names) == value
