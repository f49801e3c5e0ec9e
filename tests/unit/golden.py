"""The one switch for golden files: ``CI_SHARDS_REGEN_GOLDEN=1`` (or ``pytest --regen-golden``) rewrites every
golden file under tests/data from the current output instead of comparing against it; review the diff after."""

from __future__ import annotations

import os
from pathlib import Path

REGEN_ENV = "CI_SHARDS_REGEN_GOLDEN"


def regenerating() -> bool:
    return os.environ.get(REGEN_ENV) == "1"


def check_golden(path: Path, text: str) -> None:
    """``text`` equals the golden file at ``path`` (written first when regenerating)."""
    if regenerating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"missing golden file {path}; regenerate with {REGEN_ENV}=1 (or pytest --regen-golden)"
    assert text == path.read_text(encoding="utf-8"), f"{path} differs; if intended: {REGEN_ENV}=1, review the diff"
