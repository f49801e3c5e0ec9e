"""The changed files of a diff, from ``git diff --name-status -z -M`` output. Pure.

A rename is one change with both paths (``old_path`` → ``path``): the tests of either may break. A
copy keeps its source untouched, so only the new path counts as changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ci_shards.select.paths import shown


class ChangeKind(str, Enum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"
    COPIED = "copied"
    TYPE_CHANGED = "type-changed"


_KINDS = {
    "A": ChangeKind.ADDED,
    "M": ChangeKind.MODIFIED,
    "D": ChangeKind.DELETED,
    "R": ChangeKind.RENAMED,
    "C": ChangeKind.COPIED,
    "T": ChangeKind.TYPE_CHANGED,
}


@dataclass(frozen=True)
class ChangedFile:
    kind: ChangeKind
    path: str  # the path at HEAD (for a deletion: the path it had)
    old_path: str | None = None  # renames and copies: the path at the base

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path this change touches: both sides of a rename."""
        if self.kind is ChangeKind.RENAMED and self.old_path is not None:
            return (self.old_path, self.path)
        return (self.path,)

    def describe(self) -> str:
        if self.old_path is not None:
            return f"{self.kind.value} {shown(self.old_path)} → {shown(self.path)}"
        return f"{self.kind.value} {shown(self.path)}"


def parse_name_status(output: str) -> tuple[ChangedFile, ...]:
    """Parse ``git diff --name-status -z`` output: ``STATUS\\0path\\0`` or, for R/C,
    ``Rnnn\\0old\\0new\\0``. Raises ValueError on a status it does not know (an unmerged ``U``, ``X``):
    an unreadable diff must run everything, never select from a guess."""
    fields = output.split("\0")
    if fields and fields[-1] == "":
        fields.pop()
    changes: list[ChangedFile] = []
    index = 0
    while index < len(fields):
        status = fields[index]
        kind = _KINDS.get(status[:1])
        if kind is None:
            msg = f"unknown change status {status!r} in git's diff"
            raise ValueError(msg)
        width = 2 if kind in (ChangeKind.RENAMED, ChangeKind.COPIED) else 1
        if index + width >= len(fields):
            msg = f"git's diff ends inside the entry for status {status!r}"
            raise ValueError(msg)
        if width == 2:
            changes.append(ChangedFile(kind, fields[index + 2], old_path=fields[index + 1]))
        else:
            changes.append(ChangedFile(kind, fields[index + 1]))
        index += width + 1
    return tuple(sorted(changes, key=lambda c: (c.path, c.old_path or "")))
