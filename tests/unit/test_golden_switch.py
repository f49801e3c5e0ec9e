"""The golden-file switch: compare by default, rewrite when CI_SHARDS_REGEN_GOLDEN=1 (pytest --regen-golden sets it)."""

from __future__ import annotations

import pytest

from tests.unit.golden import REGEN_ENV, check_golden


def test_a_difference_fails_and_names_the_switch(tmp_path, monkeypatch):
    monkeypatch.delenv(REGEN_ENV, raising=False)
    golden = tmp_path / "g.txt"
    golden.write_text("old", encoding="utf-8")
    with pytest.raises(AssertionError, match=REGEN_ENV):
        check_golden(golden, "new")
    with pytest.raises(AssertionError, match="missing golden file"):
        check_golden(tmp_path / "absent.txt", "new")
    check_golden(golden, "old")


def test_the_switch_rewrites_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv(REGEN_ENV, "1")
    golden = tmp_path / "sub" / "g.txt"
    check_golden(golden, "new")
    assert golden.read_text(encoding="utf-8") == "new"
