"""The one way ci-shards expands a file pattern: ``plan --glob``, ``run --junit``, ``timings import --junit``,
``junit merge`` and ``junit summary`` all match files alike."""

from __future__ import annotations

import glob
from pathlib import Path


def has_magic(pattern: str) -> bool:
    """Whether ``pattern`` is a pattern rather than one file's name."""
    return any(char in pattern for char in "*?[")


def match_files(pattern: str, *, cwd: Path) -> list[str]:
    """The files ``pattern`` matches, sorted, spelled as the pattern is: relative to ``cwd`` or absolute.

    ``**`` recurses; names starting with a dot match only a pattern that starts them with one, as in a
    shell. Glob characters in ``cwd``'s own path stay literal (``root_dir``): a checkout under
    ``/builds/[ci]/`` matches like any other, where ``glob(str(cwd / pattern))`` would match nothing.
    """
    hits = glob.glob(pattern, root_dir=cwd, recursive=True)
    return sorted(hit for hit in hits if (cwd / hit).is_file())
