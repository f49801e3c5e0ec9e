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
   a change inside one of its functions. The files that loaded it and are not selected by both maps run
   in full (one pytest process, failures attributed per file from the JUnit report): any failure there
   outside a map's selection is a miss of that map. The files both select run with ``-x``: at least one
   failure anywhere means the mutation is killed. Mutations no test kills are counted apart and left
   out of the figures.
5. Coverage map: before the campaign, one full base run of the suite under ``ci-shards run --coverage``
   (per-test-file contexts) and ``ci-shards aggregate --coverage-out``; every mutation is then selected
   twice, with the import map only and with the coverage map (``--select-coverage``), which narrows a
   change confined to function bodies to the test files that executed them.
6. Figures: misses per map (must be 0), and the median over killed mutations of the selected share of
   the suite's test time (baseline seconds of the selected files / all), per map.

Run by hand (needs a venv with the package's test dependencies, e.g. pytest hypothesis pretend tomli_w):
  .venv/bin/python benchmarks/selection.py --sdist packaging-26.3.tar.gz --python /tmp/venv/bin/python \\
      --package packaging --work /tmp/selbench/run --mutations 60 --seed 12
(the Python needs coverage too; ci-shards' own src/ is put on its PYTHONPATH for the coverage launcher.)
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

import ci_shards
from ci_shards.select.apply import select_items
from ci_shards.select.decide import Selection
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
                    line = int(getattr(node, "lineno", 0))
                    if mutated is None or segment is None or line <= func.lineno:
                        continue
                    operator, new = mutated
                    options.append(Mutation(rel, func.name, line, operator, segment, ast.unparse(new)))
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


def coverage_map(python: str, repo: Path, tests: Sequence[str], work: Path) -> Path:
    """coverage.json of one full base run of ``tests`` under ``ci-shards run --coverage`` (one shard,
    per-test-file contexts), folded by ``ci-shards aggregate --coverage-out``. Written outside the repository."""
    out = work / "base-coverage"
    out.mkdir()
    (out / "items.txt").write_text("".join(f"{t}\n" for t in tests), encoding="utf-8")
    own_src = Path(ci_shards.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": f"{repo / 'src'}{os.pathsep}{own_src}"}
    cli = [sys.executable, "-m", "ci_shards"]
    plan = str(out / "plan.json")
    steps = [
        [*cli, "plan", "--items", str(out / "items.txt"), "--shards", "1", "-o", plan],
        [*cli, "run", "--plan", plan, "--shard", "1/1", "--coverage", "--out", str(out / "shards"), "--",
         python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml={junit}", "{items}"],
        [*cli, "aggregate", "--plan", plan, str(out / "shards"), "--coverage-out", str(out / "cov")],
    ]  # fmt: skip
    for step in steps:
        done = subprocess.run(step, cwd=repo, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"coverage map: {' '.join(step[3:5])} failed (exit {done.returncode}): {done.stderr[-2000:]}")
    artifact = out / "cov" / "coverage.json"
    if json.loads(artifact.read_text(encoding="utf-8")).get("state") != "complete":
        sys.exit("coverage map: the base run's coverage is not complete")
    return artifact


def failing_files(python: str, repo: Path, files: Sequence[str], work: Path) -> set[str]:
    """The files of ``files`` with a failing test, all run in full in one pytest process (JUnit ``file``
    attributes, xunit1); a failure the report cannot place reruns every file alone."""
    if not files:
        return set()
    junit = work / "truth.xml"
    junit.unlink(missing_ok=True)
    code = pytest(python, repo, files, f"--junitxml={junit}", "-o", "junit_family=xunit1")
    if code == 0:
        return set()
    found: set[str] = set()
    if junit.is_file():
        for case in ET.parse(junit).iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                found.add(str(case.get("file", "")))
    if found and found <= set(files):
        return found
    return {f for f in files if pytest(python, repo, [f]) != 0}


def module_of(path: str) -> str:
    return path.removeprefix("src/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")


@dataclass(frozen=True)
class Picked:
    """One map's selection for a mutation."""

    selected: tuple[str, ...]
    share: float
    misses: tuple[str, ...]  # unselected files with a failing test
    run_all: str


@dataclass(frozen=True)
class Result:
    mutation: Mutation
    killed: bool
    imports: Picked  # the import map only
    coverage: Picked  # with the coverage map of the base run
    narrowing: str  # what the coverage map said about the mutated file


def _narrowing_note(selection: Selection, path: str) -> str:
    for line in selection.lines:
        if line.startswith((f"coverage narrowed {path}", f"coverage cannot narrow {path}")):
            return line
    return selection.run_all or "-"


def campaign(args: argparse.Namespace) -> tuple[list[Result], dict[str, tuple[float, list[str]]], int]:
    work = Path(args.work).resolve()
    repo = make_repo(Path(args.sdist).resolve(), work)
    base = baseline(args.python, repo, args.package, work)
    total = sum(seconds for seconds, _ in base.values())
    tests = sorted(base)
    artifact = coverage_map(args.python, repo, tests, work)
    settings = {"imports": SelectionSettings(), "coverage": SelectionSettings(coverage=str(artifact))}
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
        picks = {
            name: select_items(tests, cwd=repo, rootdir=None, env={}, settings=chosen, base="main")
            for name, chosen in settings.items()
        }
        selected = {name: set(p.selected) for name, p in picks.items()}
        module = module_of(mutation.path)
        loaded = [t for t in tests if module in base[t][1]]
        both = selected["imports"] & selected["coverage"]
        failing = failing_files(args.python, repo, [t for t in loaded if t not in both], work)
        chosen = [t for t in loaded if t in both]
        killed = bool(failing) or bool(chosen and pytest(args.python, repo, chosen, "-x") != 0)
        picked = {
            name: Picked(
                selected=tuple(sorted(selected[name])),
                share=sum(base[t][0] for t in selected[name]) / total if total else 0.0,
                misses=tuple(sorted(failing - selected[name])),
                run_all=picks[name].run_all,
            )
            for name in picks
        }
        note = _narrowing_note(picks["coverage"], mutation.path)
        results.append(Result(mutation, killed, picked["imports"], picked["coverage"], note))
        print(
            f"{tried:3} {mutation.path}:{mutation.line} {mutation.function} {mutation.operator}: killed={killed} "
            + " ".join(f"{n}={len(p.selected)}/{len(tests)},{p.share:.1%},misses={p.misses}" for n, p in picked.items())
            + f" [{note[:100]}]",
            file=sys.stderr,
            flush=True,
        )
        git(repo, "checkout", "-q", "-f", "main")
    return results, base, tried


def _figures(label: str, shares: Sequence[float]) -> str:
    if not shares:
        return f"- {label}: no killed mutation"
    return (
        f"- selected share of test time over killed mutations, {label}: median **{statistics.median(shares):.1%}**,"
        f" mean {statistics.mean(shares):.1%}, min {min(shares):.1%}, max {max(shares):.1%}"
    )


def report(args: argparse.Namespace, results: Sequence[Result], base: dict[str, tuple[float, list[str]]]) -> str:
    killed = [r for r in results if r.killed]
    uname = " ".join(platform.uname())
    narrowed = sum(r.narrowing.startswith("coverage narrowed") for r in killed)
    lines = [
        f"Selection benchmark ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, `{uname}`,"
        f" nproc {os.cpu_count()}, load {' '.join(f'{x:.1f}' for x in os.getloadavg())})",
        "",
        f"- suite: `{Path(args.sdist).name}`, {len(base)} test files, "
        f"{sum(s for s, _ in base.values()):.1f} s of test time (baseline, each file in its own process)",
        f"- mutations tried: {len(results)} (seed {args.seed}); killed (≥ 1 failing test): {len(killed)}; "
        f"survived: {len(results) - len(killed)}",
        f"- **misses, import map only: {sum(bool(r.imports.misses) for r in killed)}; with the coverage map:"
        f" {sum(bool(r.coverage.misses) for r in killed)}** (killed mutations with a failing test file outside"
        " the selection)",
        _figures("import map only", [r.imports.share for r in killed]),
        _figures("with the coverage map", [r.coverage.share for r in killed]),
        f"- the coverage map narrowed {narrowed} of {len(killed)} killed mutations (the others fell back)",
        "",
        "| # | file:line | function | mutation | killed | files (imports) | share (imports) | files (coverage) "
        "| share (coverage) | misses | coverage map |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for number, r in enumerate(results, 1):
        m = r.mutation
        change = f"`{m.before[:60]}` → `{m.after[:60]}`".replace("|", "\\|").replace("\n", " ")
        misses = ", ".join(sorted({*r.imports.misses, *r.coverage.misses})) or 0
        note = r.narrowing.removeprefix("coverage ").replace(f" {m.path}", "").replace("|", "\\|")
        lines.append(
            f"| {number} | {m.path}:{m.line} | {m.function} | {m.operator}: {change} | {'yes' if r.killed else 'no'} "
            f"| {len(r.imports.selected)} | {r.imports.share:.1%} | {len(r.coverage.selected)} "
            f"| {r.coverage.share:.1%} | {misses} | {note[:110]} |"
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
