"""``collect_ignore`` and ``collect_ignore_glob`` of a project's conftest.py files, read as text.

Pytest leaves out of collection the paths that the nearest conftest.py defining ``collect_ignore``
lists (relative to that conftest's folder), and the absolute paths that match a pattern of the
nearest one defining ``collect_ignore_glob`` (``_pytest.main.pytest_ignore_collect`` and
``Config._getconftest_pathlist``). A discovery plan imports no user code, so it reads what the
module level says literally: ``collect_ignore = [...]``, ``+= [...]``, ``.append("...")`` and
``.extend([...])`` with string literals, also under an ``if`` on the interpreter's version, implementation
or platform (``plan/interpreter_facts.py``). What depends on another condition or a computed value is not
known here and is left to the shard, whose plugin asks pytest itself and reports such a file
skipped with the reason (so a guess here can only plan a file that is then reported, never lose one).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ci_shards.plan.interpreter_facts import interpreter_fact
from ci_shards.plan.pyargs import path_location
from ci_shards.plan.pytest_args import NO_IGNORES, Ignores, last_value

NAMES: Final = ("collect_ignore", "collect_ignore_glob")
# conftest hooks that make tests no reading of the test files sees: files of other kinds collected as
# tests (pygments 2.21's snippets and example files, 1,508 of its 5,346 tests), cases generated at
# collection. A discovery plan counts neither, so it says where they come from (docs/planning.md).
UNSEEN_TEST_HOOKS: Final = ("pytest_collect_file", "pytest_generate_tests", "pytest_pycollect_makeitem")
# the modules a conftest.py (or a plugin it names) loads as plugins: their hooks make tests too, as a project's
# own collection plugin that collects test classes by base class rather than by name
PLUGINS_NAME: Final = "pytest_plugins"


def literal_lists(source: str) -> dict[str, list[str]]:
    """The names of ``NAMES`` that the module level of ``source`` assigns unconditionally, with the
    string literals it puts in them (a computed element is left out; a syntax error defines nothing)."""
    tree = _parsed(source)
    return _lists(tree) if tree is not None else {}


def _parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _hooks(tree: ast.Module) -> tuple[str, ...]:
    """The hooks of ``UNSEEN_TEST_HOOKS`` that the module level of ``tree`` defines."""
    defined = {s.name for s in tree.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}
    return tuple(hook for hook in UNSEEN_TEST_HOOKS if hook in defined)


def _plugin_names(tree: ast.Module) -> list[str]:
    """The modules the module level of ``tree`` names in ``pytest_plugins`` (a string or a list or tuple of
    them, as pytest reads it: ``_pytest.config._get_plugin_specs_as_list``)."""
    names: list[str] = []
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == PLUGINS_NAME for t in statement.targets
        ):
            value = statement.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                names = [n.strip() for n in value.value.split(",") if n.strip()]
            else:
                names = _strings(value)
    return names


def _plugin_file(location: Path | None) -> Path | None:
    """The file a plugin module's location (``path_location``: a module's file, a regular package's folder)
    holds its code in."""
    return location / "__init__.py" if location is not None and location.is_dir() else location


def _lists(tree: ast.Module) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for statement in _run(tree.body, _imported_modules(tree.body)):
        target, values, replace = _change(statement)
        if target in NAMES:
            found[target] = values if replace else [*found.get(target, []), *values]
    return found


def _imported_modules(body: Sequence[ast.stmt]) -> set[str]:
    return {a.name for s in body if isinstance(s, ast.Import) for a in s.names if a.asname is None}


def _run(body: Sequence[ast.stmt], modules: set[str]) -> Iterator[ast.stmt]:
    """The module-level statements that run: an ``if`` on the interpreter (``sys.version_info < (3, 12)``,
    ``platform.python_implementation() == "PyPy"``) gives its branch's, decided by this interpreter, which the
    shards run on (cattrs 26.2.1's conftest ignores ``*_695.py`` below 3.12); an ``if`` on anything else, none."""
    for statement in body:
        if not isinstance(statement, ast.If):
            yield statement
            continue
        decided = interpreter_fact(statement.test, modules)
        if decided is not None:
            yield from _run(statement.body if decided else statement.orelse, modules)


def _change(statement: ast.stmt) -> tuple[str, list[str], bool]:
    """(name, string literals, whether they replace the old value) of one module-level statement."""
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if len(names) == 1 and statement.value is not None:
            return names[0], _strings(statement.value), True
    if (
        isinstance(statement, ast.AugAssign)
        and isinstance(statement.target, ast.Name)
        and isinstance(statement.op, ast.Add)
    ):
        return statement.target.id, _strings(statement.value), False
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and len(call.args) == 1:
            if func.attr == "append":
                return func.value.id, _strings(ast.List(elts=[call.args[0]])), False
            if func.attr == "extend":
                return func.value.id, _strings(call.args[0]), False
    return "", [], False


def _strings(node: ast.expr) -> list[str]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def conftests_loaded(words: Sequence[str], rootdir: Path, cwd: Path) -> ConftestIgnores:
    """The conftest.py files pytest loads with the options ``words``: none with ``--noconftest``; with
    ``--confcutdir DIR`` (relative to ``cwd``, where pytest runs) none in a folder above DIR, else none above the
    rootdir (``_pytest.config.PytestPluginManager._is_in_confcutdir``, its default in ``Config._preparse``)."""
    if "--noconftest" in words:
        return ConftestIgnores(rootdir, loads=False)
    cut = last_value(words, "--confcutdir")
    return ConftestIgnores(Path(os.path.abspath(cwd / cut)) if cut else rootdir)


@dataclass
class ConftestIgnores:
    """What the conftest.py files between ``root`` and a folder make pytest leave out of it
    (pytest loads no conftest above its rootdir's settings file, so none above ``root`` counts);
    ``loads=False``: pytest loads no conftest.py at all (``--noconftest``)."""

    root: Path
    loads: bool = True
    left_out: dict[Path, None] = field(default_factory=dict)  # what ``leaves_out`` said yes to, in order
    # a conftest.py read, or a plugin module it loads → its unseen-test hooks
    hooks: dict[Path, tuple[str, ...]] = field(default_factory=dict)
    _own: dict[Path, dict[str, list[str]]] = field(default_factory=dict)
    _effective: dict[Path, Ignores] = field(default_factory=dict)
    _plugins: set[Path] = field(default_factory=set)  # the plugin modules read, each once

    def leaves_out(self, path: Path) -> bool:
        """Whether pytest leaves ``path`` (absolute, a file or a folder) out by a conftest rule."""
        if self.of(path.parent).ignores(path):
            self.left_out[path] = None
            return True
        return False

    def of(self, directory: Path) -> Ignores:
        """What pytest leaves out among the entries of ``directory`` (an absolute path)."""
        if directory not in self._effective:
            self._effective[directory] = self._compute(directory)
        return self._effective[directory]

    def _compute(self, directory: Path) -> Ignores:
        paths = globs = None
        for folder in self._chain(directory):  # nearest first: the nearest definition wins
            own = self._read(folder)
            if paths is None and "collect_ignore" in own:
                paths = frozenset(os.path.normpath(folder / p) for p in own["collect_ignore"])
            if globs is None and "collect_ignore_glob" in own:
                globs = tuple(os.path.normpath(folder / g) for g in own["collect_ignore_glob"])
        if paths is None and globs is None:
            return NO_IGNORES
        return Ignores(paths or frozenset(), globs or ())

    def _chain(self, directory: Path) -> list[Path]:
        if directory in self.root.parents:  # above the root (a --confcutdir below the rootdir): none loaded
            return []
        if directory != self.root and self.root not in directory.parents:
            return [directory]
        chain = [directory]
        while chain[-1] != self.root:
            chain.append(chain[-1].parent)
        return chain

    def _read(self, folder: Path) -> dict[str, list[str]]:
        if not self.loads:
            return {}
        if folder not in self._own:
            try:
                text = (folder / "conftest.py").read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):  # none, or unreadable: pytest would say so itself
                text = ""
            tree = _parsed(text) if text else None
            self._own[folder] = _lists(tree) if tree is not None else {}
            if tree is not None:
                self._note_hooks(folder / "conftest.py", tree, folder)
        return self._own[folder]

    def _note_hooks(self, path: Path, tree: ast.Module, folder: Path) -> None:
        """The unseen-test hooks of ``path`` and of the plugin modules it loads, those in turn included
        (looked for beside the conftest.py, at the root and in its ``src``, as a project's own plugins are, by the
        import system's path search ``plan.pyargs`` does; an installed plugin is not read)."""
        hooks = _hooks(tree)
        if hooks:
            self.hooks[path] = hooks
        for name in _plugin_names(tree):
            plugin = _plugin_file(path_location(name, (folder, self.root, self.root / "src")))
            if plugin is None or plugin in self._plugins:
                continue
            self._plugins.add(plugin)
            try:
                plugin_tree = _parsed(plugin.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                plugin_tree = None
            if plugin_tree is not None:
                self._note_hooks(plugin, plugin_tree, folder)
