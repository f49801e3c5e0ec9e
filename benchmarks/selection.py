"""Selection benchmark: a mutation campaign on a real suite from PyPI. Does the selection miss a failing test?

1. The package's sdist (``pip download --no-binary :all: --no-deps NAME==VERSION``) is unpacked and turned
   into a git repository (one commit on ``main``).
2. Baseline: every test file runs in its own pytest process (the package's own configuration), recording
   each test id's time (setup, call and teardown), which ids fail already, and which of the package's
   modules the process loaded (``sys.modules`` at the end); a small plugin of this benchmark records them.
3. Mutations, in four kinds (``--kinds``), each kind collecting ``--mutations`` killed ones: every function
   of the package's source gets at most one candidate of a kind (seeded shuffle). ``replace``: flip a
   comparison, ``and``/``or``, ``True``/``False``, an integer ``n`` → ``n + 1``, or ``return X`` →
   ``return None``. ``insert-first``: ``raise RuntimeError(...)`` as the body's new first statement, right
   after the ``def``'s ``:`` line or the docstring (before any blank or comment line, as a person types
   it). ``insert-middle``: the same between two statements of the body. ``delete``: one whole statement of
   a body of two or more. Each one is committed on a branch ``mutant`` off ``main`` and the selection
   (``select_items``, ``--base main``, the suite's test ids as items, with the failing ids the base did not
   have: a plan collects at HEAD) is asked which tests to run.
4. Ground truth, per mutation: a test file whose process never loaded the mutated module cannot observe
   a change inside one of its functions. Every file that loaded it runs in full (one pytest process,
   ``--continue-on-collection-errors``): its failing test ids (or files that failed to collect) that passed
   on the base are the truth. A failing id no selected item is, holds or is held by is a miss of that map.
   Mutations no test kills are counted apart and left out of the figures.
5. Coverage map: before the campaign, one full base run of the suite under ``ci-shards run --coverage``
   (per-test contexts) and ``ci-shards aggregate --coverage-out``, with what it cost (wall and CPU seconds,
   bytes, contexts); every mutation is then selected twice, with the import map only and with the
   coverage map (``--select-coverage``), which narrows a change confined to function bodies to the tests
   that executed them.
6. Figures: misses per map (must be 0), and the median over killed mutations of the selected share of
   the suite's test time (baseline seconds of the selected ids / all), per map, per kind and over all; the
   test files the coverage map selected most often, with their share of the time (where the median goes).

Run by hand (needs a venv with the package's test dependencies, e.g. pytest hypothesis pretend tomli_w):
  .venv/bin/python benchmarks/selection.py --sdist packaging-26.3.tar.gz --python /tmp/venv/bin/python \\
      --package packaging --work /tmp/selbench/run --mutations 8 --max-tries 14 --seed 12
(``--mutations`` and ``--max-tries`` count per kind; a project whose addopts need a plugin the base run
must not start takes ``--pytest-arg``, e.g. semver's pytest-cov: ``--pytest-arg=--no-cov``.)
(the Python needs coverage too; ci-shards' own src/ is put on its PYTHONPATH for the coverage launcher.)
Prints Markdown (the mutation list included) to stdout and writes results.json into --work.
"""

from __future__ import annotations

import argparse
import ast
import itertools
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
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import ci_shards
from ci_shards.select.apply import select_items
from ci_shards.select.decide import Selection
from ci_shards.select.recorded import RecordedTests
from ci_shards.select.settings import SelectionSettings

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "bench"}
GIT_ENV["GIT_COMMITTER_EMAIL"] = "b@example.com"
PLUGIN = """
import json, os, sys
DURATIONS, FAILED = {}, set()
def pytest_runtest_logreport(report):
    DURATIONS[report.nodeid] = DURATIONS.get(report.nodeid, 0.0) + report.duration
    if report.failed:
        FAILED.add(report.nodeid)
def pytest_collectreport(report):
    if report.failed:
        FAILED.add(report.nodeid)
def pytest_sessionfinish(session):
    prefix = os.environ["SELBENCH_PACKAGE"]
    loaded = sorted(m for m in sys.modules if m == prefix or m.startswith(prefix + "."))
    with open(os.environ["SELBENCH_OUT"], "w") as f:
        json.dump({"modules": loaded, "durations": DURATIONS, "failed": sorted(FAILED)}, f)
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


KINDS = ("replace", "insert-first", "insert-middle", "delete")
INSERTED = 'raise RuntimeError("selbench: inserted statement")'  # fails wherever it runs: killed when reached


@dataclass(frozen=True)
class Mutation:
    path: str
    function: str
    line: int
    operator: str
    before: str  # replace: the text replaced; delete: the lines deleted (from `line`)
    after: str  # replace: its replacement; inserts: the line inserted before `line`
    kind: str = "replace"


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


def _body_statements(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    first = func.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    return func.body[1:] if docstring and isinstance(first.value.value, str) else func.body


def _opening(stmt: ast.stmt) -> int:
    """The first line of a statement, its decorators included."""
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])


def _line_edits(
    rel: str, lines: Sequence[str], func: ast.FunctionDef | ast.AsyncFunctionDef
) -> dict[str, list[Mutation]]:
    """The insert and delete candidates of one function: ``INSERTED`` as the body's new first statement (right
    after the ``def``'s ``:`` line or the docstring, as a person adds one) or between two of its statements;
    one whole statement deleted (a body of two or more, so it stays a body)."""
    body = _body_statements(func)
    if not body or lines[_opening(body[0]) - 1][: body[0].col_offset].strip():  # no body proper, or on a header line
        return {}
    indent = " " * body[0].col_offset
    header = func.body[0].end_lineno or func.lineno if body[0] is not func.body[0] else _opening(body[0]) - 1
    while body[0] is func.body[0] and header > func.lineno and lines[header - 1].strip()[:1] in ("", "#"):
        header -= 1  # the `:` line, not a blank or comment line before the first statement
    new = f"{indent}{INSERTED}\n"
    found = {
        "insert-first": [Mutation(rel, func.name, header + 1, "insert first", "", new, "insert-first")],
        "insert-middle": [
            Mutation(rel, func.name, (prev.end_lineno or prev.lineno) + 1, "insert middle", "", new, "insert-middle")
            for prev, _ in itertools.pairwise(body)
        ],
        "delete": [
            Mutation(rel, func.name, start, "delete", "".join(lines[start - 1 : stmt.end_lineno]), "", "delete")
            for stmt, start in ((s, _opening(s)) for s in (body if len(body) >= 2 else []))
            if stmt.end_lineno is not None and not lines[stmt.lineno - 1][: stmt.col_offset].strip()
        ],
    }
    return {kind: options for kind, options in found.items() if options}


def candidates(repo: Path, package: str, rng: random.Random, kind: str = "replace") -> Iterator[Mutation]:
    """At most one mutation of ``kind`` per function, functions in a seeded random order."""
    per_function: list[list[Mutation]] = []
    for path in sorted((repo / "src" / package).rglob("*.py")):
        rel = path.relative_to(repo).as_posix()
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if kind != "replace":
                edits = _line_edits(rel, text.splitlines(keepends=True), func).get(kind)
                if edits:
                    per_function.append(edits)
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
    if mutation.kind != "replace":  # a whole-line edit before line `line`: insert `after`, delete `before`
        index = mutation.line - 1
        removed = len(mutation.before.splitlines())
        assert "".join(lines[index : index + removed]) == mutation.before
        path.write_text("".join([*lines[:index], mutation.after, *lines[index + removed :]]), encoding="utf-8")
        return
    offset = sum(len(line) for line in lines[: mutation.line - 1])
    start = text.index(mutation.before, offset)
    path.write_text(text[:start] + mutation.after + text[start + len(mutation.before) :], encoding="utf-8")


PROJECT_ARGS: list[str] = []  # --pytest-arg: given to every pytest run of the project (main sets it once)


def pytest(python: str, repo: Path, files: Sequence[str], *extra: str, env: dict[str, str] | None = None) -> int:
    """Exit code of pytest over ``files`` (0: all passed, 1: some failed)."""
    run_env = {**os.environ, "PYTHONPATH": str(repo / "src"), **(env or {})}
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PROJECT_ARGS, *extra, *files]
    return subprocess.run(cmd, cwd=repo, env=run_env, capture_output=True, check=False).returncode


def recorded(python: str, repo: Path, package: str, work: Path, files: Sequence[str]) -> tuple[int, dict[str, Any]]:
    """pytest over ``files`` with the benchmark's plugin: the exit code, and what the plugin wrote (the package
    modules loaded, each test id's seconds, the failed ids and the files that failed to collect). A collection
    error does not stop the other files (``--continue-on-collection-errors``)."""
    plugin_dir = work / "plugin"
    plugin_dir.mkdir(exist_ok=True)
    (plugin_dir / "selbench_plugin.py").write_text(PLUGIN, encoding="utf-8")
    out = work / "recorded.json"
    out.unlink(missing_ok=True)
    env = {"PYTHONPATH": f"{repo / 'src'}{os.pathsep}{plugin_dir}", "SELBENCH_PACKAGE": package}
    env["SELBENCH_OUT"] = str(out)
    code = pytest(python, repo, files, "-p", "selbench_plugin", "--continue-on-collection-errors", env=env)
    found = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    return code, {"modules": [], "durations": {}, "failed": [], **found}


@dataclass(frozen=True)
class Baseline:
    """The suite on the base: per test file the package modules its process loaded, per test id its seconds
    (setup, call and teardown), and the ids that already fail (never counted as a miss or a kill)."""

    modules: dict[str, list[str]]
    seconds: dict[str, float]
    failing: frozenset[str]


def baseline(python: str, repo: Path, package: str, work: Path) -> Baseline:
    modules: dict[str, list[str]] = {}
    seconds: dict[str, float] = {}
    failing: set[str] = set()
    for test in sorted(p.relative_to(repo).as_posix() for p in (repo / "tests").rglob("test_*.py")):
        code, found = recorded(python, repo, package, work, [test])
        if code == 5:  # every test deselected (opt-in markers): not part of the suite
            continue
        if code not in (0, 1) or (code == 1 and not found["failed"]):
            sys.exit(f"baseline: {test} errors before any mutation (exit {code})")
        modules[test] = found["modules"]
        seconds.update(found["durations"])
        failing.update(found["failed"])
    return Baseline(modules=modules, seconds=seconds, failing=frozenset(failing))


def coverage_map(python: str, repo: Path, tests: Sequence[str], work: Path) -> tuple[Path, dict[str, float]]:
    """coverage.json of one full base run of ``tests`` under ``ci-shards run --coverage`` (one shard,
    per-test contexts), folded by ``ci-shards aggregate --coverage-out``, written outside the repository; and
    what it cost: each step's wall and CPU seconds, the raw data's and coverage.json's bytes, the contexts."""
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
         python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PROJECT_ARGS, "--junitxml={junit}", "{items}"],
        [*cli, "aggregate", "--plan", plan, str(out / "shards"), "--coverage-out", str(out / "cov")],
    ]  # fmt: skip
    cost: dict[str, float] = {}
    for name, step in zip(("plan", "run", "aggregate"), steps, strict=True):
        wall, before = time.monotonic(), os.times()
        done = subprocess.run(step, cwd=repo, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"coverage map: {' '.join(step[3:5])} failed (exit {done.returncode}): {done.stderr[-2000:]}")
        after = os.times()
        cost[f"{name}_wall"], cost[f"{name}_cpu"] = time.monotonic() - wall, after[2] + after[3] - before[2] - before[3]
    artifact = out / "cov" / "coverage.json"
    data = json.loads(artifact.read_text(encoding="utf-8"))
    if data.get("state") != "complete":
        sys.exit("coverage map: the base run's coverage is not complete")
    cost["json_bytes"] = artifact.stat().st_size
    cost["data_bytes"] = sum(f.stat().st_size for f in (out / "shards").rglob("coverage-py*") if f.is_file())
    cost["contexts"] = len(
        data.get("contexts") or {t for f in data["files"].values() for t in f.get("tests", f["test_files"])}
    )
    return artifact, cost


def failing_tests(
    args: argparse.Namespace, repo: Path, files: Sequence[str], work: Path, known: frozenset[str]
) -> set[str]:
    """The test ids (or test files that failed to collect) of ``files``, all run in full in one process, that
    fail and passed on the base (``known``: those that did not)."""
    if not files:
        return set()
    code, found = recorded(args.python, repo, args.package, work, files)
    failed = set(found["failed"]) - known
    if code not in (0, 1) and not failed:  # pytest itself failed: count every file, never a silent pass
        return set(files)
    return failed


def module_of(path: str) -> str:
    return path.removeprefix("src/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")


@dataclass(frozen=True)
class Picked:
    """One map's selection for a mutation (test ids are items; only their files are kept, for the report)."""

    count: int  # test ids selected
    files: tuple[str, ...]  # the test files they belong to
    share: float
    misses: tuple[str, ...]  # failing test ids no selected item speaks for
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


def _mutations(args: argparse.Namespace, repo: Path, results: list[Result]) -> Iterator[Mutation]:
    """Per kind, candidates until ``--mutations`` of that kind are killed or ``--max-tries`` were tried, the kinds
    taken in turn (one of each, then the next of each), so a run stopped early still has every kind. The
    replacements keep the seed's order of earlier runs; each other kind is shuffled by ``seed``:``kind``."""
    pending = {
        kind: enumerate(
            candidates(
                repo, args.package, random.Random(args.seed if kind == "replace" else f"{args.seed}:{kind}"), kind
            )
        )
        for kind in args.kinds
    }
    while pending:
        for kind, found in list(pending.items()):
            tried, mutation = next(found, (args.max_tries, None))
            killed = sum(r.killed for r in results if r.mutation.kind == kind)
            if mutation is None or killed >= args.mutations or tried >= args.max_tries:
                del pending[kind]
                continue
            yield mutation


def pick(selection: Selection, base: Baseline, failing: set[str]) -> Picked:
    selected = set(selection.selected)
    total = sum(base.seconds.values())
    chosen = RecordedTests.of(selected)  # a failing id is caught when a selected item is it, holds it or is held
    return Picked(
        count=len(selected),
        files=tuple(sorted({t.split("::", 1)[0] for t in selected})),
        share=sum(base.seconds.get(t, 0.0) for t in selected) / total if total else 0.0,
        misses=tuple(sorted(f for f in failing if not chosen.speak_for(f))),
        run_all=selection.run_all,
    )


def campaign(args: argparse.Namespace) -> tuple[list[Result], Baseline, dict[str, float]]:
    """The mutations' results, the baseline, and the coverage map's cost (``coverage_map``)."""
    work = Path(args.work).resolve()
    saved, costed = work / "baseline.json", work / "map-cost.json"
    if args.reuse and (work / "base-coverage" / "cov" / "coverage.json").is_file():
        (repo,) = [p for p in work.iterdir() if (p / ".git").is_dir()]
        git(repo, "checkout", "-q", "-f", "main")
        if saved.is_file():
            raw = json.loads(saved.read_text(encoding="utf-8"))
            base = Baseline(modules=raw["modules"], seconds=raw["seconds"], failing=frozenset(raw["failing"]))
        else:
            base = baseline(args.python, repo, args.package, work)
            saved.write_text(json.dumps({**asdict(base), "failing": sorted(base.failing)}), encoding="utf-8")
        artifact = work / "base-coverage" / "cov" / "coverage.json"
        cost = json.loads(costed.read_text(encoding="utf-8")) if costed.is_file() else {}
    else:
        repo = make_repo(Path(args.sdist).resolve(), work)
        base = baseline(args.python, repo, args.package, work)
        saved.write_text(json.dumps({**asdict(base), "failing": sorted(base.failing)}), encoding="utf-8")
        artifact, cost = coverage_map(args.python, repo, sorted(base.modules), work)
        costed.write_text(json.dumps(cost), encoding="utf-8")
    tests = sorted(base.seconds)  # test ids are the items: the narrowing may keep some tests of a file
    settings = {"imports": SelectionSettings(), "coverage": SelectionSettings(coverage=str(artifact))}
    results: list[Result] = []
    for tried, mutation in enumerate(_mutations(args, repo, results), 1):
        git(repo, "checkout", "-q", "-B", "mutant", "main")
        apply(repo, mutation)
        git(repo, "commit", "-q", "-am", f"mutate {mutation.function}")
        module = module_of(mutation.path)
        loaded = [t for t, modules in base.modules.items() if module in modules]
        failing = failing_tests(args, repo, loaded, work, base.failing)  # every loaded file in full: the truth
        # a plan collects at HEAD: a failing test the mutation renamed (a parametrize id made of a decorated
        # function's name, say) is one of its items, new to the map
        items = [*tests, *sorted(failing - set(tests))]
        picks = {
            name: select_items(items, cwd=repo, rootdir=None, env={}, settings=chosen, base="main")
            for name, chosen in settings.items()
        }
        picked = {name: pick(p, base, failing) for name, p in picks.items()}
        note = _narrowing_note(picks["coverage"], mutation.path)
        results.append(Result(mutation, bool(failing), picked["imports"], picked["coverage"], note))
        print(
            f"{tried:3} {mutation.kind} {mutation.path}:{mutation.line} {mutation.function} {mutation.operator}:"
            f" killed={bool(failing)} "
            + " ".join(f"{n}={p.count}/{len(tests)},{p.share:.1%},misses={p.misses}" for n, p in picked.items())
            + f" [{note[:100]}]",
            file=sys.stderr,
            flush=True,
        )
        git(repo, "checkout", "-q", "-f", "main")
    return results, base, cost


def _figures(label: str, shares: Sequence[float]) -> str:
    if not shares:
        return f"- {label}: no killed mutation"
    return (
        f"- selected share of test time over killed mutations, {label}: median **{statistics.median(shares):.1%}**,"
        f" mean {statistics.mean(shares):.1%}, min {min(shares):.1%}, max {max(shares):.1%}"
    )


def _median(shares: Sequence[float]) -> str:
    return f"{statistics.median(shares):.1%}" if shares else "-"


def per_kind(results: Sequence[Result]) -> list[str]:
    """One row per mutation kind and one for all: tried, killed, misses and median shares over the killed."""
    rows = [
        "| kind | tried | killed | misses (imports) | misses (coverage) | median share (imports) "
        "| median share (coverage) | narrowed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    kinds = sorted({r.mutation.kind for r in results}, key=lambda k: KINDS.index(k) if k in KINDS else len(KINDS))
    for kind in [*kinds, "all kinds"]:
        tried = [r for r in results if kind in (r.mutation.kind, "all kinds")]
        killed = [r for r in tried if r.killed]
        rows.append(
            f"| {kind} | {len(tried)} | {len(killed)} | {sum(bool(r.imports.misses) for r in killed)} "
            f"| {sum(bool(r.coverage.misses) for r in killed)} | {_median([r.imports.share for r in killed])} "
            f"| {_median([r.coverage.share for r in killed])} "
            f"| {sum(r.narrowing.startswith('coverage narrowed') for r in killed)} |"
        )
    return rows


def most_selected(results: Sequence[Result], base: Baseline, listed: int = 8) -> list[str]:
    """The test files the coverage map selected (some tests of) most often, with their share of the suite's
    time: where the median goes."""
    killed = [r for r in results if r.killed]
    total = sum(base.seconds.values()) or 1.0
    counts = Counter(f for r in killed for f in r.coverage.files)
    rows = ["| test file | selected for (of killed) | its share of test time |", "|---|---|---|"]
    for path, count in counts.most_common(listed):
        seconds = sum(v for t, v in base.seconds.items() if t.split("::", 1)[0] == path)
        rows.append(f"| {path} | {count} of {len(killed)} | {seconds / total:.1%} |")
    return rows


def _map_cost(cost: dict[str, float]) -> str:
    if not cost:
        return "reused from an earlier run of this benchmark (--reuse), its cost not recorded"
    return (
        f"base run under `ci-shards run --coverage` {cost['run_wall']:.1f} s wall, {cost['run_cpu']:.1f} s CPU;"
        f" fold {cost['aggregate_wall']:.1f} s wall, {cost['aggregate_cpu']:.1f} s CPU; raw data"
        f" {cost['data_bytes'] / 1e6:.2f} MB, coverage.json {cost['json_bytes'] / 1e6:.2f} MB,"
        f" {cost['contexts']:.0f} contexts"
    )


def report(args: argparse.Namespace, results: Sequence[Result], base: Baseline, cost: str, map_cost: str) -> str:
    killed = [r for r in results if r.killed]
    uname = " ".join(platform.uname())
    narrowed = sum(r.narrowing.startswith("coverage narrowed") for r in killed)
    files = {t.split("::", 1)[0] for t in base.seconds}
    lines = [
        f"Selection benchmark ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, `{uname}`,"
        f" nproc {os.cpu_count()}, load {' '.join(f'{x:.1f}' for x in os.getloadavg())})",
        "",
        f"- cost: {cost}",
        f"- the coverage map: {map_cost}",
        f"- suite: `{Path(args.sdist).name}`, {len(files)} test files, {len(base.seconds)} tests,"
        f" {sum(base.seconds.values()):.1f} s of test time (baseline, each file in its own process)",
        f"- mutations tried: {len(results)} (seed {args.seed}); killed (≥ 1 failing test): {len(killed)}; "
        f"survived: {len(results) - len(killed)}",
        f"- **misses, import map only: {sum(bool(r.imports.misses) for r in killed)}; with the coverage map:"
        f" {sum(bool(r.coverage.misses) for r in killed)}** (killed mutations with a failing test outside"
        " the selection)",
        _figures("import map only", [r.imports.share for r in killed]),
        _figures("with the coverage map", [r.coverage.share for r in killed]),
        f"- the coverage map narrowed {narrowed} of {len(killed)} killed mutations (the others fell back)",
        "",
        *per_kind(results),
        "",
        *most_selected(results, base),
        "",
        "| # | kind | file:line | function | mutation | killed | tests (imports) | share (imports) | tests (coverage)"
        " | share (coverage) | misses | coverage map |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for number, r in enumerate(results, 1):
        m = r.mutation
        change = f"`{m.before.strip()[:60]}` → `{m.after.strip()[:60]}`".replace("|", "\\|").replace("\n", " ")
        misses = ", ".join(sorted({*r.imports.misses, *r.coverage.misses})) or 0
        note = r.narrowing.removeprefix("coverage ").replace(f" {m.path}", "").replace("|", "\\|")
        lines.append(
            f"| {number} | {m.kind} | {m.path}:{m.line} | {m.function} | {m.operator}: {change} "
            f"| {'yes' if r.killed else 'no'} "
            f"| {r.imports.count} | {r.imports.share:.1%} | {r.coverage.count} in {len(r.coverage.files)} files"
            f" | {r.coverage.share:.1%} | {misses} | {note[:110]} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist", required=True, help="the package's sdist (.tar.gz)")
    parser.add_argument("--python", required=True, help="a Python with the package's test dependencies")
    parser.add_argument("--package", required=True, help="the import name under src/")
    parser.add_argument("--work", required=True, help="a scratch folder (replaced)")
    parser.add_argument("--mutations", type=int, default=60, help="killed mutations to collect per kind (default: 60)")
    parser.add_argument("--max-tries", type=int, default=200, help="mutations to try at most per kind (default: 200)")
    parser.add_argument("--seed", type=int, default=12, help="shuffle seed (default: 12)")
    parser.add_argument(
        "--kinds", type=lambda v: v.split(","), default=list(KINDS), help=f"mutation kinds (default: {','.join(KINDS)})"
    )
    parser.add_argument(
        "--reuse", action="store_true", help="keep --work's repository, baseline.json and base coverage map from an"
        " earlier run of the same sdist (default: start afresh)"
    )  # fmt: skip
    parser.add_argument(
        "--pytest-arg", action="append", default=[], help="an argument for every pytest run of the project, e.g."
        " --pytest-arg=--no-cov for a project whose addopts start pytest-cov (default: none)"
    )  # fmt: skip
    args = parser.parse_args()
    PROJECT_ARGS.extend(args.pytest_arg)
    wall, load, before = time.monotonic(), os.getloadavg(), os.times()
    results, base, map_cost = campaign(args)
    after = os.times()
    cpu = sum(after[:4]) - sum(before[:4])  # this process and every child waited for (pytest, coverage, git)
    loads = [" ".join(f"{x:.1f}" for x in values) for values in (load, os.getloadavg())]
    cost = (
        f"{time.monotonic() - wall:.0f} s wall, {cpu:.0f} s CPU (this process and its children), load average"
        f" {loads[0]} at the start, {loads[1]} at the end"
    )
    text = report(args, results, base, cost, _map_cost(map_cost))
    (Path(args.work) / "results.json").write_text(
        json.dumps([asdict(r) for r in results], indent=1, ensure_ascii=False), encoding="utf-8"
    )
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
