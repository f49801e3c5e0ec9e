"""The docs cannot drift from the CLI: every ``ci-shards …`` command line in README.md, docs/ and
examples/ is parsed by the real parser (each flag exists for its subcommand, and a literal line parses
as written), every flag named alone in the docs is a flag of ci-shards (or of the tool it names), and
every flag a subcommand takes appears in its docs page (issue 27: docs/run.md told users
``local … --timings-variant KEY``, which ``local`` rejects)."""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from ci_shards.cli import build_parser
from ci_shards.options.aliases import DeprecatedAlias
from ci_shards.plan.pytest_args import CACHE_SELECTIONS, NO_TEST_OPTIONS  # pytest's, which the docs say are refused

REPO = Path(__file__).resolve().parents[2]
DOCS: Final = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted(p for p in (REPO / "examples").rglob("*") if p.suffix in (".md", ".yml", ".yaml", ".sh")),
]
# the pages a subcommand's flags are documented in: its own first, then those of the option groups it shares
PAGES: Final = {
    "plan": ("planning.md", "selection.md", "configuration.md"),
    "matrix": ("planning.md", "selection.md", "configuration.md"),
    "run": ("run.md", "coverage.md"),
    "local": ("run.md", "planning.md", "selection.md", "configuration.md", "coverage.md"),
    "aggregate": ("aggregate.md", "coverage.md"),
    "comment": ("aggregate.md",),
    "junit": ("aggregate.md",),
    "timings": ("timings-store.md",),
    "coverage": ("coverage.md",),
    "init": ("init.md",),
}
# flags of the tools the docs show ci-shards running (pytest, jest, node, git): not ci-shards' own
FOREIGN: Final = {
    "--junitxml", "--tb", "--pyargs", "--ignore", "--ignore-glob", "--rootdir", "--doctest-glob", "--doctest-modules",
    "--db-url", "--maxfail", "--pdb", "--config-file", "--noconftest", "--confcutdir", "--collect-in-virtualenv",
    "--reporters", "--experimental-test-coverage", "--unshallow", "--disable-plugin-autoload",
    "--continue-on-collection-errors",  # pytest's (docs/planning.md: a collection error pytest runs past)
    "--store-durations",  # pytest-split's
    "--dist", "--max-worker-restart", "--loadscope-reorder",  # pytest-xdist's (docs/run.md#workers)
    "--cov-fail-under", "--cov",  # pytest-cov's (docs/coverage.md, a coverage gate in the project's addopts)
    "--reruns",  # pytest-rerunfailures' (docs/rules.md: a pass on its re-run is flaky)
    "--snapshot-warn-unused",  # syrupy's (docs/rules.md: its unused-snapshot check on a shard)
    "--nomigrations",  # pytest-django's (docs/init.md: the plugins a project's pytest settings need)
    "--retr",  # README's example of a typo that is refused
}  # fmt: skip
# pytest's, added by the bundled plugin: read from its pytest_addoption, so a removed one is no longer allowed
PLUGIN_FLAGS: Final = frozenset(
    re.findall(r'addoption\(\s*"(--ci-shards-[a-z-]+)"', (REPO / "src/ci_shards/pytest_plugin.py").read_text())
)
# old spellings, named only where the README lists them as such
OLD_NAMES_PAGE: Final = REPO / "README.md"
FENCE: Final = re.compile(r"^\s*(```|~~~)")
# a word of letters after ci-shards: `ci-shards shard-1-of-4: …` is a line of its output, not a command
COMMAND: Final = re.compile(r"(?:^|(?<=[\s/]))ci-shards\s+([a-z][a-z-]*(?=[\s/]|$).*)")
PLACEHOLDER: Final = re.compile(r"[][|…]|\.\.\.|(?<![\w{])[A-Z][A-Z_]+(?![\w}])")


def _segments(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line, text, whole) of every shell line (backslash continuations joined; whole: a command as typed) and,
    in Markdown, of every inline code span (often a fragment: ``ci-shards run --pytest``)."""
    inside = path.suffix != ".md"  # YAML and shell files are all code
    pending = ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if path.suffix == ".md" and FENCE.match(line):
            inside = not inside
        elif inside and line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
        elif inside:
            yield number, pending + line, True
            pending = ""
        else:
            yield from ((number, m.group(1), False) for m in re.finditer(r"`([^`]+)`", line))


def documented_commands() -> list[tuple[str, str, bool]]:
    """(where, command line, whole) of every ``ci-shards …`` in the docs, one per command of a ``&&`` chain."""
    found = []
    for path in DOCS:
        for number, text, whole in _segments(path):
            for part in re.split(r"\s(?:&&|;|\|\||\|(?= *(?:head|jq|tee)\b))\s", text):
                match = COMMAND.search(part)
                if match and not part.lstrip().startswith(("name:", "#")):
                    found.append((f"{path.relative_to(REPO)}:{number}", f"ci-shards {match.group(1).strip()}", whole))
    return found


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(
        (dict(a.choices) for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {}
    )  # fmt: skip


def _resolve(words: list[str]) -> tuple[list[str], argparse.ArgumentParser, list[str]]:
    """The subcommand path the words name, its parser, and the words after it."""
    parser, path = build_parser(), []
    while words and words[0] in _subparsers(parser):
        parser = _subparsers(parser)[words[0]]
        path.append(words.pop(0))
    return path, parser, words


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    """The flags a user may write: deprecated aliases are not among them."""
    return {o for a in parser._actions if not isinstance(a, DeprecatedAlias) for o in a.option_strings}


COMMANDS: Final = documented_commands()


def test_the_docs_have_commands_of_every_user_subcommand():
    named = {line.split()[1] for _where, line, _whole in COMMANDS}
    assert set(PAGES) <= named


@pytest.mark.parametrize(("where", "line", "whole"), COMMANDS, ids=[f"{w} {c[:60]}" for w, c, _ in COMMANDS])
def test_every_documented_command_line_is_accepted(where, line, whole):
    try:
        words = shlex.split(line)
    except ValueError:  # an unclosed quote in a synopsis: its words are still checked one by one
        words = line.split()
    path, parser, rest = _resolve(words[1:])
    assert path, f"{where}: `{line}` names no subcommand"
    own = rest[: rest.index("--")] if "--" in rest else rest
    unknown = [w.split("=")[0] for w in own if w.startswith("-") and w not in ("-", "--") and not w[1].isdigit()]
    unknown = [flag.strip("[(") for flag in unknown if flag.strip("[(") not in _flags(parser)]
    assert not unknown, f"{where}: `ci-shards {' '.join(path)}` has no {', '.join(unknown)}"
    if whole and not PLACEHOLDER.search(line):  # a literal command line parses as written, values and all
        try:
            build_parser().parse_args(words[1:])
        except SystemExit as exit_:
            pytest.fail(f"{where}: `{line}` does not parse (exit {exit_.code})")


def test_every_flag_named_in_the_docs_is_a_flag():
    every = set().union(*(_flags(p) for p in _all_parsers(build_parser())))
    aliases = {o for p in _all_parsers(build_parser()) for a in p._actions if isinstance(a, DeprecatedAlias)
               for o in a.option_strings}  # fmt: skip
    wrong = []
    for path in DOCS:
        if path.name == "benchmarks.md":  # the benchmark scripts' flags: test_references checks those
            continue
        for number, span, _whole in _segments(path):
            match = re.fullmatch(r"(--[a-z][a-z0-9-]*)(?:[ =].*)?", span)
            allowed = every | FOREIGN | PLUGIN_FLAGS | NO_TEST_OPTIONS.keys() | set(CACHE_SELECTIONS)
            allowed |= aliases if path == OLD_NAMES_PAGE else set()
            if match and match.group(1) not in allowed:
                wrong.append(f"{path.relative_to(REPO)}:{number}: `{span}`")
    assert not wrong, "\n".join(wrong)


def _all_parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for sub in _subparsers(parser).values():
        yield from _all_parsers(sub)


def _commands_with_parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for name, sub in _subparsers(build_parser()).items():
        yield name, sub
        yield from ((name, leaf) for leaf in _all_parsers(sub))


@pytest.mark.parametrize("command", sorted(PAGES))
def test_every_flag_of_a_subcommand_is_in_its_docs_page(command):
    text = "".join((REPO / "docs" / page).read_text(encoding="utf-8") for page in PAGES[command])
    missing = set()
    for name, parser in _commands_with_parsers():
        if name != command:
            continue
        for action in parser._actions:
            if isinstance(action, DeprecatedAlias) or not action.option_strings or action.help == argparse.SUPPRESS:
                continue
            if {"--help", "--debug"} & set(action.option_strings):
                continue
            if not any(re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text) for o in action.option_strings):
                missing.add(action.option_strings[-1])
    assert not missing, f"{command}: not in docs/{PAGES[command][0]}: {', '.join(sorted(missing))}"
