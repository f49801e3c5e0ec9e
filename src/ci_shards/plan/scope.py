"""What pytest's collection arguments reach, for the items discovery takes from the timings. Pure.

pytest collects only under its arguments (else ``testpaths``, else the working directory), and a node id
argument (``tests/test_a.py::TestB``) collects part of its file. Discovery walks the same roots, but the
timings name every file a run of the whole suite measured: planned from a narrower run (`-- tests/unit`
beside the timings of `tests/`), a timed file outside the roots, or a timed test outside the node ids, is an
item the shard's pytest never collects, and its shard failed with "planned but never reported". So a
timing is planned only when its file lies under a root, and, in a file named by node ids, only when the
item and a node id cover one another (``model.matching.item_candidates``). Whatever this leaves out that
pytest does collect still runs: in the shard that owns its file, or the unowned shard.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_shards.model.matching import file_under, item_candidates, item_file


@dataclass(frozen=True)
class Scope:
    """The roots pytest walks, relative to the working directory ("" for itself; None when one lies outside
    it: a ``--pyargs`` package elsewhere, whose files are named from that root, so no file is ruled out), and
    the node ids named in each file that is not also named whole."""

    folders: tuple[str, ...] | None
    node_ids: Mapping[str, tuple[str, ...]]

    def holds_file(self, file: str) -> bool:
        """Whether pytest's walk reaches ``file`` (a POSIX path relative to the working directory)."""
        return self.folders is None or any(_under(file, folder) for folder in self.folders)

    def keeps(self, item: str) -> bool:
        """Whether pytest, given the arguments, collects ``item`` or part of it."""
        file = item_file(item)
        named = self.node_ids.get(file)
        if named is None:
            return self.holds_file(file)
        return item == file or any(n in item_candidates(item) or item in item_candidates(n) for n in named)


def scope_of(roots: Sequence[Path], words: Sequence[str], cwd: Path) -> Scope:
    """The scope of the absolute ``roots`` pytest walks (a node id's file among them) and of the
    collection ``words`` (paths and node ids relative to ``cwd``, absolute ``cwd``)."""
    folders: list[str] | None = []
    for root in roots:
        relative = os.path.relpath(root, cwd)
        if folders is not None and (relative == os.pardir or relative.startswith(os.pardir + os.sep)):
            folders = None
        elif folders is not None:
            folders.append("" if relative == os.curdir else Path(relative).as_posix())
    named: dict[str, list[str]] = {}
    whole: list[str] = []  # what the words name whole: a folder, a file
    for word in words:
        path, sep, rest = word.partition("::")
        relative = Path(os.path.relpath(cwd / path, cwd)).as_posix()
        if sep:
            named.setdefault(relative, []).append(f"{relative}::{rest}")
        else:
            whole.append("" if relative == "." else relative)
    node_ids = {file: tuple(ids) for file, ids in named.items() if not any(_under(file, f) for f in whole)}
    return Scope(tuple(folders) if folders is not None else None, node_ids)


def _under(file: str, folder: str) -> bool:
    """Whether ``file`` is ``folder`` or below it (POSIX, relative to the working directory, "" for it, which
    holds what is below it, not ``../x.py``)."""
    if not folder:
        return not file.startswith("../")
    return file_under(file, folder)
