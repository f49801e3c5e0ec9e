"""Collecting items: list parsing, globs, ."""

from __future__ import annotations

import io

import pytest

from ci_shards.common.errors import InputError
from ci_shards.plan.collect import glob_items, parse_item_lines, read_items


def test_parse_item_lines():
    assert parse_item_lines("a\n\n  # x\n b::c \r\n") == ["a", "b::c"]


def test_read_items_from_stdin_and_file(tmp_path):
    assert read_items("-", cwd=tmp_path, stdin=io.StringIO("x\ny\n")) == ["x", "y"]
    (tmp_path / "l.txt").write_text("p\n")
    assert read_items("l.txt", cwd=tmp_path) == ["p"]
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match=r"bin\.txt: not UTF-8 text \(byte 0\)"):
        read_items("bin.txt", cwd=tmp_path)


def test_glob_recurses_and_refuses_empty_or_absolute(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "test_1.py").write_text("")
    (tmp_path / "a" / "b" / "test_2.py").write_text("")
    assert glob_items(["**/test_*.py"], cwd=tmp_path) == ["a/b/test_2.py", "a/test_1.py"]
    with pytest.raises(InputError, match="matched no files"):
        glob_items(["x/*.py"], cwd=tmp_path)
    with pytest.raises(InputError, match="relative"):
        glob_items([str(tmp_path / "*.py")], cwd=tmp_path)
