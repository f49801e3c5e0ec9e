"""How long ``ci-shards init --dry-run`` takes in repositories of each kind, small and big.

    .venv/bin/python benchmarks/init.py               # every kind, 5 rounds each
    .venv/bin/python benchmarks/init.py --rounds 3

Each run is a fresh ``python -m ci_shards init --dry-run`` process (so start-up counts, as for a user), timed as
wall seconds and CPU seconds (user + system of the child, from ``resource.getrusage``). Kinds:
- ``pytest``: a src-layout package with a test extra and testpaths (init reads a few files);
- ``node-small``: a jest project with 50 test files;
- ``node-big``: a jest project with 20,000 files in src/ (2,000 of them tests) and 100,000 in node_modules/
  (never entered: the walk skips it);
- ``go``: a go module.
Prints a Markdown table with the date, machine and load, for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _node(root: Path, sources: int, tests_every: int, modules: int) -> None:
    _write(
        root, {"package.json": '{"devDependencies": {"jest": "^29", "jest-junit": "^16"}}', "package-lock.json": "{}"}
    )
    for i in range(sources):
        folder = root / "src" / f"m{i % 200}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / (f"f{i}.test.js" if i % tests_every == 0 else f"f{i}.js")).write_text("")
    for i in range(modules):
        folder = root / "node_modules" / f"p{i % 1000}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"x{i}.test.js").write_text("")


def make(kind: str, root: Path) -> Path:
    root.mkdir(parents=True)
    if kind == "pytest":
        _write(root, {"pyproject.toml": '[project]\nname = "p"\nversion = "0"\nrequires-python = ">=3.10"\n'
                      '[project.optional-dependencies]\ntest = ["pytest"]\n[tool.pytest.ini_options]\n'
                      'testpaths = ["tests"]\n', "src/p/__init__.py": "", "tests/test_p.py": ""})  # fmt: skip
    elif kind == "node-small":
        _node(root, sources=50, tests_every=1, modules=0)
    elif kind == "node-big":
        _node(root, sources=20_000, tests_every=10, modules=100_000)
    else:
        _write(root, {"go.mod": "module example.com/m\n\ngo 1.22\n", "m_test.go": "package m\n"})
    return root


def timed(repo: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ci_shards", "init", "--dry-run"], cwd=repo, check=True,
                   capture_output=True)  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="runs per kind (default: 5)")
    args = parser.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    command = " ".join([".venv/bin/python benchmarks/init.py", *sys.argv[1:]])
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC · {platform.platform()} · nproc {os.cpu_count()} · "
          f"load {load} · `{command}`")  # fmt: skip
    print("\n| repository | median wall s | median CPU s | rounds |\n|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="ci-shards-init-bench-") as tmp:
        for kind in ("pytest", "node-small", "node-big", "go"):
            repo = make(kind, Path(tmp) / kind)
            runs = [timed(repo) for _ in range(args.rounds)]
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            print(f"| {kind} | {wall:.3f} | {cpu:.3f} | {args.rounds} |")
    print(f"\nload after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
