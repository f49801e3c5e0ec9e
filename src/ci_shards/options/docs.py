"""docs/configuration.md's table of keys, rendered from the declarations (tests/unit/test_options.py keeps the
page equal to it; ``CI_SHARDS_REGEN_GOLDEN=1`` rewrites it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ci_shards.options.declared import CONFIG_KEYS, OPTIONS
from ci_shards.options.spec import ConfigKey, Option

# the order subcommands are named in; a flag that `plan` does not take is written with its subcommand
COMMAND_ORDER: Final = ("plan", "matrix", "run", "local", "aggregate", "comment")
TABLE_START: Final = "<!-- keys: generated from src/ci_shards/options/declared/ -->"
TABLE_END: Final = "<!-- end of keys -->"


def flag_text(key: ConfigKey, options: Sequence[Option] = OPTIONS) -> str:
    """``--durations``; ``aggregate --fail-on``; ``run --coverage``, ``--no-coverage``."""
    reading = [o for o in options if o.config == key.name]
    if not reading:
        return key.flag_text
    names = list(dict.fromkeys(o.name for o in reading))
    commands = {c for o in reading for c in o.commands}
    prefix = "" if "plan" in commands else next(c for c in COMMAND_ORDER if c in commands) + " "
    return ", ".join(f"`{prefix if i == 0 else ''}{name}`" for i, name in enumerate(names))


def config_table() -> str:
    """The Markdown table of every config key, between its markers."""
    rows = [
        TABLE_START,
        "| key | flag | default | meaning |",
        "|---|---|---|---|",
        *(f"| `{k.name}` | {flag_text(k)} | {k.default} | {k.meaning} |" for k in CONFIG_KEYS),
        TABLE_END,
    ]
    return "\n".join(rows) + "\n"


def with_table(page: str) -> str:
    """``page`` with its generated table replaced by today's (the page must hold the markers)."""
    start, end = page.index(TABLE_START), page.index(TABLE_END) + len(TABLE_END) + 1
    return page[:start] + config_table() + page[end:]
