"""The static import map: each test file → the project files it imports, transitively. Pure.

Built from the project's Python sources as text (``ast``; no user code is imported or run). A test
file depends on what it imports, on the ``conftest.py`` files of its folder and every folder above
it, on the modules those conftests import and name in ``pytest_plugins``, on the project's own
pytest plugins (``pytest11`` entry points), on every package ``__init__.py`` an import executes, and
on the ``.py`` files its closure names in a string literal (a script a test runs as a subprocess).
Module names resolve the way pytest's default ``prepend`` import mode sets ``sys.path``: the
repository root, ``src/``, and each test file's first folder upwards without an ``__init__.py``.

Names that resolve to no file (a module deleted by the change, a third-party package) are kept, so a
deleted module still reaches the tests that imported it. Tie-breaks: the first root that holds a
module wins, in the order above.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from ci_shards.select.paths import shown

ALWAYS_MARKER: Final = "ci_shards_always"


class ImportMapError(ValueError):
    """A project file the map needs cannot be parsed: the selection must run everything."""


def _parent(path: str) -> str:
    return posixpath.dirname(path)


def _imported_names(tree: ast.AST, package: str) -> set[str]:
    """Every module name a file imports (absolute), plus ``from x import y`` as ``x.y`` (``y`` may be a
    submodule) and literal ``pytest_plugins`` / ``importlib.import_module("...")`` strings."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module or "", node.level, package)
            if base is None:
                continue
            if base:
                names.add(base)
            names.update(f"{base}.{alias.name}" if base else alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets
        ):
            names.update(_strings(node.value))
        elif isinstance(node, ast.Call) and _is_import_module(node.func) and node.args:
            names.update(_strings(node.args[0]))
    return names


def _script_paths(tree: ast.AST) -> set[str]:
    """String literals naming a Python file (``"scripts/gen.py"``): a test may run it as a subprocess."""
    return {
        n.value.strip().removeprefix("./")
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and n.value.strip().endswith(".py")
        and "\n" not in n.value
    }


def _is_import_module(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id in ("import_module", "__import__")
    )


def _strings(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _absolute(module: str, level: int, package: str) -> str | None:
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None  # beyond the top package: Python refuses it too
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base)


def has_always_marker(tree: ast.AST) -> bool:
    """Whether ``pytest.mark.ci_shards_always`` appears anywhere in the file (a decorator or ``pytestmark``):
    the whole file then always runs, a superset of the marked tests."""
    return any(isinstance(n, ast.Attribute) and n.attr == ALWAYS_MARKER for n in ast.walk(tree))


@dataclass(frozen=True)
class ImportMap:
    """For each test file, the project files (``files``) and module names (``names``) it depends on."""

    files: Mapping[str, frozenset[str]]
    names: Mapping[str, frozenset[str]]
    roots: tuple[str, ...]
    always: frozenset[str]  # test files that carry the ci_shards_always marker
    # per test file, the .py paths named in string literals of its closure (scripts run as subprocesses)
    scripts: Mapping[str, frozenset[str]] = field(default_factory=dict)
    name: str = "import"

    def module_names(self, path: str) -> set[str]:
        """The names ``path`` is imported by, under every root that holds it."""
        if not path.endswith(".py"):
            return set()
        found: set[str] = set()
        for root in self.roots:
            prefix = f"{root}/" if root else ""
            if not path.startswith(prefix):
                continue
            rel = path[len(prefix) : -3]
            if rel.endswith("/__init__"):
                rel = rel[: -len("/__init__")]
            if rel and "." not in rel:
                found.add(rel.replace("/", "."))
        return found

    def tests_for(self, path: str) -> frozenset[str] | None:
        """The test files that import ``path`` (None: not a Python file, this map cannot say)."""
        if not path.endswith(".py"):
            return None
        names = self.module_names(path)
        return frozenset(
            test
            for test, files in self.files.items()
            if path in files
            or names & self.names.get(test, frozenset())
            or any(path == s or path.endswith("/" + s) for s in self.scripts.get(test, ()))
        )


def _basedir(path: str, sources: Mapping[str, str]) -> str:
    folder = _parent(path)
    while folder and posixpath.join(folder, "__init__.py") in sources:
        folder = _parent(folder)
    return folder


def _conftests(path: str, sources: Mapping[str, str]) -> list[str]:
    found = []
    folder = _parent(path)
    while True:
        candidate = posixpath.join(folder, "conftest.py") if folder else "conftest.py"
        if candidate in sources and candidate != path:
            found.append(candidate)
        if not folder:
            return found
        folder = _parent(folder)


class _Graph:
    """The project's modules as an import graph, parsed and resolved lazily (each file once)."""

    def __init__(self, sources: Mapping[str, str], roots: tuple[str, ...]) -> None:
        self.sources = sources
        self.roots = roots
        self.trees: dict[str, ast.AST] = {}
        self.edges: dict[str, tuple[set[str], set[str]]] = {}

    def tree_of(self, path: str) -> ast.AST:
        if path not in self.trees:
            try:
                self.trees[path] = ast.parse(self.sources[path], filename=path)
            except (SyntaxError, ValueError) as err:
                msg = f"{shown(path)}: cannot be parsed ({err.__class__.__name__}: {shown(str(err))})"
                raise ImportMapError(msg) from None
        return self.trees[path]

    def resolve(self, name: str) -> str | None:
        rel = name.replace(".", "/")
        for root in self.roots:
            for candidate in (f"{rel}.py", f"{rel}/__init__.py"):
                path = posixpath.join(root, candidate) if root else candidate
                if path in self.sources:
                    return path
        return None

    def package_of(self, path: str) -> str:
        for root in self.roots:
            prefix = f"{root}/" if root else ""
            if path.startswith(prefix):
                rel = _parent(path[len(prefix) :])
                if not rel or posixpath.join(_parent(path), "__init__.py") in self.sources:
                    return rel.replace("/", ".")
        return ""

    def deps(self, path: str) -> tuple[set[str], set[str]]:
        """The project files ``path`` imports, and every module name it imports (packages included)."""
        if path not in self.edges:
            names: set[str] = set()
            for name in _imported_names(self.tree_of(path), self.package_of(path)):
                parts = name.split(".")
                names.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))  # packages run first
            self.edges[path] = ({f for f in map(self.resolve, names) if f is not None}, names)
        return self.edges[path]

    def reach(self, test: str, plugin_names: set[str]) -> tuple[set[str], set[str]]:
        """The files and module names a run of ``test`` imports: from the test, its conftests, the plugins
        and its packages' ``__init__`` files, transitively."""
        start = {test, *_conftests(test, self.sources), *(f for f in map(self.resolve, plugin_names) if f is not None)}
        folder = _parent(test)
        while folder and posixpath.join(folder, "__init__.py") in self.sources:
            start.add(posixpath.join(folder, "__init__.py"))
            folder = _parent(folder)
        seen_files: set[str] = set()
        seen_names: set[str] = set(plugin_names)
        todo = sorted(start)
        while todo:
            path = todo.pop()
            if path in seen_files:
                continue
            seen_files.add(path)
            found, imported = self.deps(path)
            seen_names |= imported
            todo.extend(found - seen_files)
        return seen_files, seen_names


def build_import_map(
    sources: Mapping[str, str], test_files: Iterable[str], *, plugins: Iterable[str] = ()
) -> ImportMap:
    """The map for ``test_files`` over ``sources`` ({repository path: text} of every project ``.py``
    file). ``plugins``: module names of the project's own pytest plugins. Raises ``ImportMapError``
    naming the file when one of them does not parse."""
    tests = sorted(set(test_files))
    roots = tuple(dict.fromkeys(["", "src", *(_basedir(t, sources) for t in tests)]))
    graph = _Graph(sources, roots)
    files: dict[str, frozenset[str]] = {}
    names: dict[str, frozenset[str]] = {}
    scripts: dict[str, frozenset[str]] = {}
    always: set[str] = set()
    plugin_names = set(plugins)
    for test in tests:
        if test not in sources:
            continue
        if has_always_marker(graph.tree_of(test)):
            always.add(test)
        seen_files, seen_names = graph.reach(test, plugin_names)
        files[test] = frozenset(seen_files)
        names[test] = frozenset(seen_names)
        scripts[test] = frozenset(p for f in seen_files for p in _script_paths(graph.tree_of(f)))
    return ImportMap(files=files, names=names, roots=roots, always=frozenset(always), scripts=scripts)
