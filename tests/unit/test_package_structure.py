"""The package's shape (issue 21): no import cycle anywhere in ``src/ci_shards`` (a function-level import is an
edge too: it only moves the cycle to run time), and docs/architecture.md's folder tree is the tree on disk."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Set
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "ci_shards"
ARCHITECTURE = REPO / "docs" / "architecture.md"


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts}


def imported(path: Path, name: str, known: Set[str]) -> set[str]:
    """Every module of ``known`` that ``path`` (module ``name``) imports, wherever the import statement is:
    ``from a.b import c`` is ``a.b.c`` when that is a module, else ``a.b``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, one level up per extra dot
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in known else base)
    return {m for m in found if m in known and m != name}


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imported(path, name, set(known)) for name, path in known.items()}


def cycles(graph: Mapping[str, Set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan), as a path back to its start."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_path_through(graph, component) for component in components]


def _path_through(graph: Mapping[str, Set[str]], component: list[str]) -> list[str]:
    """A shortest cycle from the component's first module back to itself (breadth first inside it)."""
    start, inside = component[0], set(component)
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(graph[node] & inside):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if nxt not in came:
                    came[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return component


def test_no_import_cycle_in_the_package():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_cycle_finder_sees_a_function_level_import(tmp_path: Path):
    # a test that cannot fail is a defect: two modules that import each other, one of them inside a function
    pkg = tmp_path / "ci_shards"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from ci_shards.b import g\n")
    (pkg / "b.py").write_text("def g():\n    from ci_shards import a  # noqa\n")
    (pkg / "c.py").write_text("import ci_shards.a\n")
    graph = {name: imported(path, name, set(modules(pkg))) for name, path in modules(pkg).items()}
    assert graph["ci_shards.c"] == {"ci_shards.a"}
    assert cycles(graph) == [["ci_shards.a", "ci_shards.b", "ci_shards.a"]]


# --------------------------------------------------------------------------------------------
# docs/architecture.md's tree

_TREE_LINE = re.compile(r"^(?P<indent>(?:│   |    )*)(?:├── |└── )(?P<name>[^\s]+)")


def documented_tree(text: str) -> list[str]:
    """The paths the folder tree of docs/architecture.md names (the fenced block that starts ``src/ci_shards/``),
    relative to the package: ``plan/``, ``plan/collect.py``."""
    block = re.search(r"```text\nsrc/ci_shards/\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md: no ```text block starting with src/ci_shards/"
    parents: list[str] = []
    paths = []
    for line in block.group(1).splitlines():
        match = _TREE_LINE.match(line)
        assert match, f"docs/architecture.md: not a line of the tree: {line!r}"
        depth = len(match["indent"]) // 4
        del parents[depth:]
        path = "".join(parents) + match["name"]
        paths.append(path)
        if match["name"].endswith("/"):
            parents.append(match["name"])
    return paths


def tree_on_disk(root: Path = PACKAGE) -> Iterator[str]:
    """Every package (``plan/``) and module (``plan/collect.py``) but the ``__init__.py`` files, which the
    package's line stands for; packages' data (``templates/``, ``py.typed``) may be named, need not."""
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(root)
        if path.name == "__init__.py":
            if rel.parent != Path("."):
                yield rel.parent.as_posix() + "/"
        else:
            yield rel.as_posix()


def test_the_architecture_tree_is_the_package_tree():
    named = documented_tree(ARCHITECTURE.read_text(encoding="utf-8"))
    on_disk = set(tree_on_disk())
    missing = sorted(on_disk - set(named))
    gone = sorted(p for p in named if not (PACKAGE / p).exists())
    assert not missing, f"docs/architecture.md's tree does not name: {', '.join(missing)}"
    assert not gone, f"docs/architecture.md's tree names what is not in src/ci_shards: {', '.join(gone)}"
    assert len(named) == len(set(named)), "docs/architecture.md's tree names a path twice"


def test_the_tree_check_sees_a_missing_and_an_invented_module(tmp_path: Path):
    (tmp_path / "plan").mkdir()
    for name in ("__init__.py", "cli.py", "plan/__init__.py", "plan/collect.py", "plan/render.py"):
        (tmp_path / name).write_text("")
    doc = "```text\nsrc/ci_shards/\n├── cli.py    x\n└── plan/     y\n    ├── collect.py\n    └── matrix.py\n```\n"
    named = documented_tree(doc)
    assert named == ["cli.py", "plan/", "plan/collect.py", "plan/matrix.py"]
    assert set(tree_on_disk(tmp_path)) - set(named) == {"plan/render.py"}
    assert [p for p in named if not (tmp_path / p).exists()] == ["plan/matrix.py"]
