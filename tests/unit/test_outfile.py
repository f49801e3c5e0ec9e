"""outfile.atomic: the one writer of every file another stage reads (a kill leaves the old file or the new)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ci_shards.common import outfile
from ci_shards.common.errors import InputError


def test_the_new_content_replaces_the_old_only_when_the_block_ends(tmp_path: Path) -> None:
    target = tmp_path / "new" / "dir" / "outcome.json"
    outfile.write_atomic(target, "old\n")
    with outfile.atomic(target) as handle:
        handle.write("new")
        assert target.read_text() == "old\n"  # readers see the old file while the new one is written
    assert target.read_text() == "new"
    assert os.listdir(target.parent) == ["outcome.json"]  # no temp file left


def test_a_failure_inside_the_block_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), outfile.atomic(target) as handle:
        handle.write("half of a new")
        raise RuntimeError
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["plan.json"]


def test_the_file_gets_the_umask_mode_not_the_temp_files_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        outfile.write_atomic(tmp_path / "junit.xml", "<x/>")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "junit.xml").stat().st_mode) == 0o644


def test_a_folder_that_cannot_be_written_is_an_input_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("a file, not a folder")
    # the file in the way is named, as every output flag names it (outfile.folder_error)
    with pytest.raises(
        InputError, match=r"blocker/out.json: cannot create its folder: .*blocker is a file, not a folder"
    ):
        outfile.write_atomic(tmp_path / "blocker" / "out.json", "{}")
