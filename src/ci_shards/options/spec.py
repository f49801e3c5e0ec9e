"""The shape of one option's declaration, and the argparse arguments built from declarations.

No argparse internals are read: which flags a command line gave is known from the declarations (``given_flags``),
not from the parser's private action lists.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ci_shards.options.aliases import DeprecatedAlias


class ConfigKind(Enum):
    """How ``config.parse_config`` checks a key's value. CUSTOM keys keep a parser of their own in options/config.py."""

    STRING = "string"  # a non-empty string
    NUMBER = "number"  # a finite number ≥ 0
    COUNT = "count"  # a whole number ≥ 1
    BOOL = "bool"  # true or false
    CHOICE = "choice"  # one of the choices of the option that reads the key
    CUSTOM = "custom"


@dataclass(frozen=True, kw_only=True)
class ConfigKey:
    """A key of ``ci-shards.yml`` / ``[tool.ci-shards]``: how it is checked and its row in docs/configuration.md.
    ``field`` is the ``config.Config`` attribute it fills (the key with ``_`` for ``-``)."""

    name: str
    kind: ConfigKind
    default: str  # the docs table's default column, as users read it
    meaning: str  # the docs table's meaning column
    flag_text: str = ""  # the docs table's flag column when no option declares this key (e.g. "none")

    @property
    def field(self) -> str:
        return self.name.replace("-", "_")


NO_DEFAULT: Any = object()  # argparse's own default: None, False for a switch


@dataclass(frozen=True, kw_only=True)
class Option:
    """One command-line option (or positional) as data. ``commands``: the subcommands that take it; ``config``: the
    config key that fills it when the flag is absent; ``action_input``: the action.yml input that becomes it."""

    flags: tuple[str, ...]
    help: str
    commands: frozenset[str]
    dest: str | None = None
    group: str | None = None  # the --help section (argparse argument group) it is listed under
    exclusive: str | None = None  # options sharing this name exclude each other (--coverage / --no-coverage)
    action: str | type[argparse.Action] | None = None
    type: Callable[[str], Any] | None = None
    choices: tuple[str, ...] | None = None
    default: Any = NO_DEFAULT
    metavar: str | None = None
    nargs: str | None = None
    required: bool = False
    config: str | None = None
    action_input: str | None = None
    deprecated_for: str | None = None  # a hidden old name of this flag: stores into its dest, warns once

    @property
    def name(self) -> str:
        """The long flag (``--target-seconds``), or the positional's name."""
        return next((f for f in self.flags if f.startswith("--")), self.flags[0])

    @property
    def key(self) -> str:
        """The attribute argparse stores the value under."""
        if self.dest is not None:
            return self.dest
        return self.name.lstrip("-").replace("-", "_")

    def kwargs(self) -> dict[str, Any]:
        given = {
            "action": self.action,
            "type": self.type,
            "choices": list(self.choices) if self.choices is not None else None,
            "metavar": self.metavar,
            "nargs": self.nargs,
        }
        kwargs: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        kwargs["help"] = self.help
        if self.deprecated_for is not None:
            kwargs.update(action=DeprecatedAlias, new=self.deprecated_for, help=argparse.SUPPRESS)
        if self.default is not NO_DEFAULT:
            kwargs["default"] = self.default
        if self.required:
            kwargs["required"] = True
        if self.dest is not None:
            kwargs["dest"] = self.dest
        return kwargs


def for_command(options: Iterable[Option], command: str) -> tuple[Option, ...]:
    return tuple(o for o in options if command in o.commands)


def add_options(parser: argparse.ArgumentParser, options: Sequence[Option]) -> None:
    """Add ``options`` in their order, each under its --help section (created on first use)."""
    groups: dict[str, Any] = {}
    exclusive: dict[str, Any] = {}
    for option in options:
        target: Any = parser
        if option.group is not None:
            if option.group not in groups:
                groups[option.group] = parser.add_argument_group(option.group)
            target = groups[option.group]
        if option.exclusive is not None:
            if option.exclusive not in exclusive:
                exclusive[option.exclusive] = target.add_mutually_exclusive_group()
            target = exclusive[option.exclusive]
        target.add_argument(*option.flags, **option.kwargs())


def _unset(value: object) -> bool:
    """What an option holds when its flag is absent: None, an off switch, an empty repeatable. By
    identity: ``0 == False``, and ``--shard-overhead 0`` is a value the command line gave."""
    return value is None or value is False or (isinstance(value, list) and not value)


def given_flags(values: Mapping[str, Any], options: Iterable[Option]) -> list[str]:
    """The flags among ``options`` that the command line gave, in declaration order (``values``: the parsed
    arguments by dest). An option whose default is a real value counts as given when it differs."""
    given = []
    for option in options:
        if option.key not in values or not option.flags[0].startswith("-"):
            continue
        value = values[option.key]
        if not _unset(value) and (option.default is NO_DEFAULT or value != option.default):
            given.append(option.name)
    return given
