"""Selection benchmark: a mutation campaign on a real suite from PyPI. Does the selection miss a failing test?

1. The package's sdist (``pip download --no-binary :all: --no-deps NAME==VERSION``) is unpacked and turned
   into a git repository (one commit on ``main``).
2. Baseline: every test file runs in its own pytest process (the package's own configuration), recording
   its test time (JUnit) and which of the package's modules it loaded (``sys.modules`` at the end).
3. Mutations: every function of the package's source gets at most one candidate (seeded shuffle): flip a
   comparison, ``and``/``or``, ``True``/``False``, an integer ``n`` → ``n + 1``, or ``return X`` →
   ``return None``. Each one is committed on a branch ``mutant`` off ``main`` and the selection
   (``select_items``, ``--base main``, test files as items) is asked which test files to run.
4. Ground truth, per mutation: a test file whose process never loaded the mutated module cannot observe
   a change inside one of its functions. The files that loaded it but were *not* selected run in full:
   any failure there is a miss. The selected files that loaded it run with ``-x``: at least one failure
   means the mutation is killed. Mutations no test kills are counted apart and left out of the figures.
5. Figures: misses (must be 0), and the median over killed mutations of the selected share of the
   suite's test time (baseline seconds of the selected files / all).

Run by hand (needs a venv with the package's test dependencies, e.g. pytest hypothesis pretend tomli_w):
  .venv/bin/python benchmarks/selection.py --sdist packaging-26.3.tar.gz --python /tmp/venv/bin/python \\
      --package packaging --work /tmp/selbench/run --mutations 60 --seed 12
Prints Markdown (the mutation list included) to stdout and writes results.json into --work.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ci_shards.select.apply import select_items
from ci_shards.select.settings import SelectionSettings

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "bench"}
GIT_ENV["GIT_COMMITTER_EMAIL"] = "b@example.com"
PLUGIN = """
import json, os, sys
def pytest_sessionfinish(session):
    prefix = os.environ["SELBENCH_PACKAGE"]
    loaded = sorted(m for m in sys.modules if m == prefix or m.startswith(prefix + "."))
    with open(os.environ["SELBENCH_MODULES"], "w") as f:
        json.dump(loaded, f)
"""
FLIP = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env).stdout


def make_repo(sdist: Path, work: Path) -> Path:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    with tarfile.open(sdist) as tar:
        tar.extractall(work, filter="data")
    (repo,) = [p for p in work.iterdir() if p.is_dir()]
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{sdist.name} as published")
    return repo


@dataclass(frozen=True)
class Mutation:
    path: str
    function: str
    line: int
    operator: str
    before: str
    after: str


def _mutate(node: ast.AST) -> tuple[str, ast.AST] | None:
    if isinstance(node, ast.Compare) and type(node.ops[0]) in FLIP:
        new = ast.Compare(left=node.left, ops=[FLIP[type(node.ops[0])](), *node.ops[1:]], comparators=node.comparators)
        return "flip comparison", new
    if isinstance(node, ast.BoolOp):
        return "and/or", ast.BoolOp(op=ast.Or() if isinstance(node.op, ast.And) else ast.And(), values=node.values)
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return "True/False", ast.Constant(value=not node.value)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return "n → n + 1", ast.Constant(value=node.value + 1)
    if (
        isinstance(node, ast.Return)
        and node.value is not None
        and not (isinstance(node.value, ast.Constant) and node.value.value is None)
    ):
        return "return None", ast.Return(value=ast.Constant(value=None))
    return None


def candidates(repo: Path, package: str, rng: random.Random) -> Iterator[Mutation]:
    """At most one mutation per function, functions in a seeded random order."""
    per_function: list[list[Mutation]] = []
    for path in sorted((repo / "src" / package).rglob("*.py")):
        rel = path.relative_to(repo).as_posix()
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            options = []
            for stmt in func.body:
                for node in ast.walk(stmt):
                    mutated = _mutate(node)
                    segment = ast.get_source_segment(text, node)
                    if mutated is None or segment is None or getattr(node, "lineno", 0) <= func.lineno:
                        continue
                    operator, new = mutated
                    options.append(Mutation(rel, func.name, node.lineno, operator, segment, ast.unparse(new)))
            if options:
                per_function.append(options)
    rng.shuffle(per_function)
    for options in per_function:
        yield rng.choice(options)


def apply(repo: Path, mutation: Mutation) -> None:
    path = repo / mutation.path
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    offset = sum(len(line) for line in lines[: mutation.line - 1])
    start = text.index(mutation.before, offset)
    path.write_text(text[:start] + mutation.after + text[start + len(mutation.before) :], encoding="utf-8")


def pytest(python: str, repo: Path, files: Sequence[str], *extra: str, env: dict[str, str] | None = None) -> int:
    """Exit code of pytest over ``files`` (0: all passed, 1: some failed)."""
    run_env = {**os.environ, "PYTHONPATH": str(repo / "src"), **(env or {})}
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, *files]
    return subprocess.run(cmd, cwd=repo, env=run_env, capture_output=True, check=False).returncode


def baseline(python: str, repo: Path, package: str, work: Path) -> dict[str, tuple[float, list[str]]]:
    """Per test file: its test seconds and the package modules its process loaded."""
    plugin_dir = work / "plugin"
    plugin_dir.mkdir(exist_ok=True)
    (plugin_dir / "selbench_plugin.py").write_text(PLUGIN, encoding="utf-8")
    found: dict[str, tuple[float, list[str]]] = {}
    tests = sorted(p.relative_to(repo).as_posix() for p in (repo / "tests").rglob("test_*.py"))
    for test in tests:
        junit, modules = work / "junit.xml", work / "modules.json"
        env = {
            "PYTHONPATH": f"{repo / 'src'}{os.pathsep}{plugin_dir}",
            "SELBENCH_PACKAGE": package,
            "SELBENCH_MODULES": str(modules),
        }
        code = pytest(python, repo, [test], "-p", "selbench_plugin", f"--junitxml={junit}", env=env)
        if code == 5:  # every test deselected (opt-in markers): not part of the suite
            continue
        if code != 0:
            sys.exit(f"baseline: {test} fails before any mutation (exit {code})")
        seconds = sum(float(c.get("time", 0)) for c in ET.parse(junit).iter("testcase"))
        found[test] = (seconds, json.loads(modules.read_text()))
    return found


def module_of(path: str) -> str:
    return path.removeprefix("src/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")


@dataclass(frozen=True)
class Result:
    mutation: Mutation
    selected: tuple[str, ...]
    share: float
    killed: bool
    misses: tuple[str, ...]  # unselected files with a failing test
    run_all: str


def campaign(args: argparse.Namespace) -> tuple[list[Result], dict[str, tuple[float, list[str]]], int]:
    work = Path(args.work).resolve()
    repo = make_repo(Path(args.sdist).resolve(), work)
    base = baseline(args.python, repo, args.package, work)
    total = sum(seconds for seconds, _ in base.values())
    tests = sorted(base)
    rng = random.Random(args.seed)
    results: list[Result] = []
    tried = 0
    for mutation in candidates(repo, args.package, rng):
        if sum(r.killed for r in results) >= args.mutations or tried >= args.max_tries:
            break
        tried += 1
        git(repo, "checkout", "-q", "-B", "mutant", "main")
        apply(repo, mutation)
        git(repo, "commit", "-q", "-am", f"mutate {mutation.function}")
        selection = select_items(tests, cwd=repo, rootdir=None, env={}, settings=SelectionSettings(), base="main")
        selected = set(selection.selected)
        module = module_of(mutation.path)
        loaded = [t for t in tests if module in base[t][1]]
        unselected = [t for t in loaded if t not in selected]
        misses = tuple(t for t in unselected if pytest(args.python, repo, [t]) != 0)
        chosen = [t for t in loaded if t in selected]
        killed = bool(misses) or bool(chosen and pytest(args.python, repo, chosen, "-x") != 0)
        share = sum(base[t][0] for t in selected) / total if total else 0.0
        results.append(Result(mutation, tuple(sorted(selected)), share, killed, misses, selection.run_all))
        print(
            f"{tried:3} {mutation.path}:{mutation.line} {mutation.function} {mutation.operator}: "
            f"killed={killed} selected={len(selected)}/{len(tests)} share={share:.1%} misses={misses}",
            file=sys.stderr,
            flush=True,
        )
        git(repo, "checkout", "-q", "-f", "main")
    return results, base, tried


def report(args: argparse.Namespace, results: Sequence[Result], base: dict[str, tuple[float, list[str]]]) -> str:
    killed = [r for r in results if r.killed]
    shares = [r.share for r in killed]
    uname = " ".join(platform.uname())
    lines = [
        f"Selection benchmark ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, `{uname}`,"
        f" nproc {os.cpu_count()})",
        "",
        f"- suite: `{Path(args.sdist).name}`, {len(base)} test files, "
        f"{sum(s for s, _ in base.values()):.1f} s of test time (baseline, each file in its own process)",
        f"- mutations tried: {len(results)} (seed {args.seed}); killed (≥ 1 failing test): {len(killed)}; "
        f"survived: {len(results) - len(killed)}",
        f"- **misses: {sum(bool(r.misses) for r in killed)}** (killed mutations with a failing test outside"
        " the selection)",
        "- selected share of test time over killed mutations, import map only: median"
        f" **{statistics.median(shares):.1%}**, mean {statistics.mean(shares):.1%}, min {min(shares):.1%},"
        f" max {max(shares):.1%}"
        if shares
        else "- no killed mutation",
        "",
        "| # | file:line | function | mutation | killed | selected files | share | misses |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for number, r in enumerate(results, 1):
        m = r.mutation
        change = f"`{m.before[:60]}` → `{m.after[:60]}`".replace("|", "\\|").replace("\n", " ")
        lines.append(
            f"| {number} | {m.path}:{m.line} | {m.function} | {m.operator}: {change} | {'yes' if r.killed else 'no'} "
            f"| {len(r.selected)} | {r.share:.1%} | {', '.join(r.misses) or 0} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist", required=True, help="the package's sdist (.tar.gz)")
    parser.add_argument("--python", required=True, help="a Python with the package's test dependencies")
    parser.add_argument("--package", required=True, help="the import name under src/")
    parser.add_argument("--work", required=True, help="a scratch folder (replaced)")
    parser.add_argument("--mutations", type=int, default=60, help="killed mutations to collect (default: 60)")
    parser.add_argument("--max-tries", type=int, default=200, help="mutations to try at most (default: 200)")
    parser.add_argument("--seed", type=int, default=12, help="shuffle seed (default: 12)")
    args = parser.parse_args()
    results, base, _tried = campaign(args)
    text = report(args, results, base)
    (Path(args.work) / "results.json").write_text(
        json.dumps([asdict(r) for r in results], indent=1, ensure_ascii=False), encoding="utf-8"
    )
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
