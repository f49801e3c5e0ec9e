"""An option shared by several subcommands is defined once: the same choices, default and help everywhere."""

from __future__ import annotations

import argparse

from ci_shards.cli import build_parser


def _subparsers(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[f"{prefix}{name}"] = sub
                found.update(_subparsers(sub, f"{prefix}{name} "))
    return found


def test_flaky_result_is_one_definition():
    definitions = {
        name: (tuple(action.choices or ()), action.default, action.help)
        for name, sub in _subparsers(build_parser()).items()
        for action in sub._actions
        if "--flaky-result" in action.option_strings
    }
    assert {"run", "local", "aggregate", "comment"} <= set(definitions)
    assert len(set(definitions.values())) == 1, definitions
    assert next(iter(definitions.values()))[:2] == (("pass", "fail"), "pass")
