"""The ``.gitignore`` every generated project that is a git repository carries, as a real one does.

Without it a test that commits its project commits what running it wrote: with bytecode writing on
(Python's default; this team's machines set ``PYTHONDONTWRITEBYTECODE=1``, which hid it) the
``__pycache__/*.pyc`` of a first run is committed, and the next change "touches" those files, so a
change-based selection runs everything (issue 26, item 6).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

GITIGNORE: Final = """\
__pycache__/
*.py[cod]
.pytest_cache/
.coverage
.coverage.*
.ci-shards/
ci-shards-results/
node_modules/
"""


def write_gitignore(root: Path) -> None:
    """Write the project's ``.gitignore`` (before its first ``git add``)."""
    (root / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
