"""Discovery's per-file test counts against pytest's own collection, on one suite (by hand; docs/benchmarks.md).

    cd UNPACKED_SDIST && VENV/bin/python /path/to/benchmarks/discover_counts.py [--json-out FILE] -- PYTEST ARGS

Run with the interpreter of a venv that holds the project, its test dependencies, pytest and ci-shards, from the
folder pytest is run from (the unpacked sdist's root). Two things, with the same pytest arguments:

- ``ci-shards plan --discover --shards 4 -- ARGS``, in this process, the count of every file it plans kept from
  the ``count_of`` discovery hands to ``merge_with_timings`` (what the plan estimated the file from; plan.json
  holds the shards' seconds only);
- ``python -m pytest --collect-only -q -p no:cacheprovider ARGS`` with a small plugin (``PLUGIN``) that writes the
  collected node ids: counted per file (the part before the first ``::``) and per test function.

Prints both totals and every file whose counts differ, and under each the test functions (node ids without their
parameters) whose cases differ: pytest's cases, then discovery's (None: discovery names no such id — a test it
does not count, or one in a file it counts but cannot name). ``--json-out`` keeps it all.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ci_shards.cli import main as ci_shards
from ci_shards.plan import discover
from ci_shards.plan.static_count import FileCount

# the plugin that writes the collected node ids, one a line, loaded by pytest from a folder of its own (this
# folder on PYTHONPATH would shadow coverage with benchmarks/coverage.py)
PLUGIN = """
import os
def pytest_collection_finish(session):
    with open(os.environ["DISCOVER_COUNTS_IDS"], "w", encoding="utf-8") as out:
        out.write("\\n".join(item.nodeid for item in session.items))
"""


def discovered(args: list[str], plan_out: Path) -> dict[str, Any]:
    """file → the FileCount (or the reason it cannot be read) that ``plan --discover`` estimated it from."""
    counts: dict[str, Any] = {}
    real = discover.merge_with_timings

    def spy(files: Any, timings: Any, on_disk: Any, count_of: Any = discover.not_counted) -> Any:
        files = list(files)
        counts.update({f: count_of(f) for f in files})
        return real(files, timings, on_disk, count_of)

    discover.merge_with_timings = spy  # type: ignore[assignment]
    try:
        ci_shards(["plan", "--discover", "--shards", "4", "-o", str(plan_out), "--", *args])
    finally:
        discover.merge_with_timings = real
    return counts


def collected(args: list[str], work: Path) -> list[str]:
    (work / "discover_counts_ids.py").write_text(PLUGIN, encoding="utf-8")
    ids_out = work / "ids.txt"
    env = dict(os.environ, DISCOVER_COUNTS_IDS=str(ids_out))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(work), env.get("PYTHONPATH", "")) if p)
    argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run([*argv, "-p", "discover_counts_ids", *args], env=env, capture_output=True, check=False)
    if not ids_out.is_file():
        why = f"pytest stopped before its collection finished:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        raise SystemExit(why)
    return [line for line in ids_out.read_text(encoding="utf-8").splitlines() if line]


def compare(args: list[str], work: Path) -> dict[str, Any]:
    counts = discovered(args, work / "plan.json")
    ids = collected(args, work)
    per_file = collections.Counter(i.split("::")[0] for i in ids)
    per_test = collections.Counter(i.split("[")[0] for i in ids)
    disc = {f: c.tests if isinstance(c, FileCount) else c for f, c in counts.items()}
    files = sorted(set(disc) | set(per_file))
    diff = {f: [per_file.get(f, 0), disc.get(f)] for f in files if per_file.get(f, 0) != disc.get(f)}
    detail = {}
    for file in diff:
        count = counts.get(file)
        parts = {f"{file}::{k}": n for k, n, _units in (count.parts if isinstance(count, FileCount) else ())}
        keys = sorted({k for k in per_test if k.split("::")[0] == file} | set(parts))
        detail[file] = [[k, per_test.get(k, 0), parts.get(k)] for k in keys if per_test.get(k, 0) != parts.get(k)]
    return {
        "collected": len(ids),
        "discovered": sum(v for v in disc.values() if isinstance(v, int)),
        "files": len(files),
        "diff": diff,
        "detail": detail,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("args", nargs="*", help="pytest's arguments, after --")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        result = compare(options.args, Path(work))
    if options.json_out:
        options.json_out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(
        f"pytest collected {result['collected']}, discovery counted {result['discovered']} in {result['files']} files"
    )
    for file, (pytest_count, discovery_count) in result["diff"].items():
        print(f"  {file}: pytest {pytest_count}, discovery {discovery_count}")
        for test, cases, counted in result["detail"][file]:
            print(f"      {test.split('::', 1)[1]}: {cases} / {counted}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
