"""The one reader of TOML (pyproject.toml, pytest 9's pytest.toml): the standard library's ``tomllib`` from Python
3.11, else ``tomli``, the package it came from (a dependency on Python 3.10 only, in pyproject.toml, as it is of
pytest itself there). Every refusal is a ``ValueError`` (``TOMLDecodeError`` is one; so is an integer longer than
Python reads) or a ``RecursionError`` (nesting deeper than the parser goes), as ``tomllib.loads`` raises them.

Before it, four readers imported ``tomllib`` each, and on Python 3.10 each refused in its own words: ``init``, a
discovery plan and ``[tool.ci-shards]`` stopped at any project keeping its pytest settings in pyproject.toml.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any


def loads(text: str) -> dict[str, Any]:
    """The TOML document ``text``, as ``tomllib.loads`` reads it."""
    parser = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
    data: dict[str, Any] = parser.loads(text)
    return data
