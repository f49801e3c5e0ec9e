"""Copy the real files the tests need from the team's ``../shared/data`` into ``tests/data``.

Run by hand (``python tests/data/vendor.py``) when the shared data changes; the tests themselves read only
``tests/data``, so a clone of the repository alone runs every test. JUnit reports are copied byte for byte.
Duration files over ``MAX_ENTRIES`` entries are trimmed to every k-th test of each file (in file order), so
every test file is still there (the planner's locality sees the same files); key order and JSON layout follow
the original. SOURCES.md records where every file comes from.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[2] / "shared" / "data"
MAX_ENTRIES = 320


def trimmed(entries: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Every k-th test of every file, so that about ``MAX_ENTRIES`` remain and every file is still there."""
    if len(entries) <= MAX_ENTRIES:
        return entries
    step = math.ceil(len(entries) / MAX_ENTRIES)
    seen: dict[str, int] = {}
    keep = []
    for node, seconds in entries:
        file = node.split("::", 1)[0]
        index = seen[file] = seen.get(file, -1) + 1
        if index % step == 0:
            keep.append((node, seconds))
    return keep


def vendor_durations(source: Path, target: Path) -> None:
    text = source.read_text()
    data = json.loads(text)
    pairs = [(k, v) for k, v in data] if isinstance(data, list) else list(data.items())
    keep = trimmed(pairs)
    if keep is pairs:
        shutil.copyfile(source, target)
        return
    indent = len(text.split("\n", 2)[1]) - len(text.split("\n", 2)[1].lstrip()) if "\n" in text.strip() else None
    body = [list(p) for p in keep] if isinstance(data, list) else dict(keep)
    target.write_text(json.dumps(body, indent=indent) + ("\n" if text.endswith("\n") else ""))


def main() -> int:
    if not SHARED.is_dir():
        print(f"no shared data at {SHARED}", file=sys.stderr)
        return 2
    for kind in ("durations", "junit"):
        (HERE / kind).mkdir(exist_ok=True)
        for source in sorted((SHARED / kind).iterdir()):
            target = HERE / kind / source.name
            if kind == "junit":
                shutil.copyfile(source, target)
            else:
                vendor_durations(source, target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
