"""``ci-shards init``: the CI configuration for the repository it runs in.

The front door ``plan_init`` reads the repository (``facts``, the I/O edge), decides (``detect``, pure) and renders
(``render``, from ``templates/ci/``); ``write_files`` puts the result in place, refusing to replace a file unless
told to. ``commands/init.py`` only parses the flags and prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_shards.common import outfile
from ci_shards.common.errors import InputError
from ci_shards.init.detect import Ci, InitRequest, Runner, Setup, decide
from ci_shards.init.facts import read_facts
from ci_shards.init.render import InitFile, render

__all__ = ["Ci", "InitFile", "InitRequest", "Planned", "Runner", "plan_init", "write_files"]


@dataclass(frozen=True)
class Planned:
    setup: Setup
    files: tuple[InitFile, ...]


def plan_init(request: InitRequest, root: Path) -> Planned:
    """What ``init`` would write for the repository at ``root``; nothing is written."""
    setup = decide(read_facts(root), request)
    return Planned(setup, render(setup))


def write_files(files: tuple[InitFile, ...], root: Path, *, force: bool) -> None:
    """Write ``files`` under ``root``, each atomically; with one of them already there (and no ``force``),
    nothing is written and the error names it."""
    if not force:
        existing = next((f.path for f in files if (root / f.path).exists()), None)
        if existing is not None:
            raise InputError(existing, "already exists; ci-shards init --force replaces it (or --dry-run shows it)")
    for file in files:
        outfile.write_atomic(root / file.path, file.text)
