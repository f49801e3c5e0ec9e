"""The tables of a parsed TOML document (pyproject.toml). Pure.

TOML lets any key hold a value of any kind (``tool = "x"`` parses), so a reader that follows ``[tool.pytest]`` or
``[project.entry-points.pytest11]`` must check each level is a table before it looks inside: one walk for every
reader of pyproject.toml (pytest's settings, ci-shards' own, the project's plugins, what ``init`` detects).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def table_at(data: Mapping[str, Any], *keys: str) -> Mapping[str, Any] | None:
    """The table at ``keys`` (``table_at(doc, "tool", "pytest")``), or None where a level is missing or no table;
    an empty table is ``{}``, which pytest, for one, still counts as its settings."""
    value: Any = data
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, Mapping) else None
