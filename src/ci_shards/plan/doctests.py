"""The doctests ``--doctest-modules`` makes pytest collect from a module, counted from its text (no import).

With ``--doctest-modules`` pytest collects every ``.py`` file of its walk as a ``DoctestModule``, test files or not
(``_pytest.doctest.pytest_collect_file``), except ``__main__.py`` and a ``setup.py`` that names setuptools or
distutils. A module makes one ``DoctestItem`` per docstring with examples that ``doctest.DocTestFinder`` finds:
the module's own, and those of the classes and functions it defines (methods, properties and nested classes too,
wherever in the module's top-level statements they are defined), never of a function defined inside a function,
whose body the finder does not look into. A ``__test__`` dictionary's strings are not counted: the count is an
estimate for the first plan, and pytest's collection, not this count, decides what runs.

Text files are doctests too, with the plugin on and no flag needed: every non-``.py`` file of the walk that
``--doctest-glob`` patterns match (``test*.txt`` when none is given) is a ``DoctestTextfile``, one item if it holds
an example. On boltons 26.2.0 it
counts 153 of the 153 doctests pytest collects from its package, on jaraco.functools 4.6.0 21 of 21, on inflect
7.6.0 11 of 11.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator, Sequence
from typing import Final

from ci_shards.plan.pytest_args import positional_words

FLAG: Final = "--doctest-modules"
GLOB_FLAG: Final = "--doctest-glob"
DEFAULT_GLOBS: Final = ("test*.txt",)  # pytest's, when no --doctest-glob is given
_EXAMPLE = re.compile(r"^[ \t]*>>>", re.MULTILINE)  # doctest's prompt starting a line of a docstring: an example
_Definition = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
_BLOCKS: Final = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)
_TRIES: Final = (ast.Try, getattr(ast, "TryStar", ast.Try))  # try/except* is Python 3.11's


def collects_doctest_modules(words: Sequence[str]) -> bool:
    """Whether pytest given ``words`` (addopts, then the user's arguments) collects doctests from modules: the flag
    is there and pytest's doctest plugin is not turned off (``-p no:doctest``)."""
    options = _options(words)
    return FLAG in options and _plugin_on(options)


def doctest_globs(words: Sequence[str]) -> list[str]:
    """The patterns of the text files pytest collects as one doctest each (``DoctestTextfile``, any file but a
    ``.py`` one): every ``--doctest-glob`` given, else pytest's default ``test*.txt``; none with the plugin off."""
    options = _options(words)
    if not _plugin_on(options):
        return []
    given = [b for a, b in itertools.pairwise(options) if a == GLOB_FLAG]
    given += [w.split("=", 1)[1] for w in options if w.startswith(f"{GLOB_FLAG}=")]
    return given or list(DEFAULT_GLOBS)


def holds_examples(source: bytes) -> bool:
    """Whether a doctest text file has an example: pytest makes its item only then."""
    return bool(_EXAMPLE.search(source.decode("utf-8", "replace")))


def _options(words: Sequence[str]) -> list[str]:
    positional = set(positional_words(words))
    return [w for w in words if w not in positional]


def _plugin_on(options: Sequence[str]) -> bool:
    return "-pno:doctest" not in options and all(pair != ("-p", "no:doctest") for pair in itertools.pairwise(options))


def doctest_module(name: str, source: bytes) -> bool:
    """Whether pytest makes a ``DoctestModule`` of a ``.py`` file of this name and text (its walk reached it)."""
    if not name.endswith(".py") or name == "__main__.py":
        return False
    return not (name == "setup.py" and (b"setuptools" in source or b"distutils" in source))


def count_doctests(source: bytes) -> int:
    """The docstrings with examples ``DocTestFinder`` finds in the module ``source``: pytest's doctest items of it.
    Raises SyntaxError (and ValueError for null bytes) as ``ast.parse`` does."""
    if b">>>" not in source:  # most modules: no parse needed (a docstring's first line follows its quotes)
        return 0
    return _count(ast.parse(source))


def _count(node: ast.Module | ast.ClassDef) -> int:
    found = int(_has_examples(ast.get_docstring(node, clean=False)))
    # the finder walks the namespace: a name bound twice (``if``/``else`` versions of one function) is one object,
    # and a name an import binds last holds another module's object, whose docstrings the finder leaves alone
    bound = dict(_bindings(node.body))
    for definition in bound.values():
        if definition is None:
            continue
        if isinstance(definition, ast.ClassDef):
            found += _count(definition)
        else:
            found += _has_examples(ast.get_docstring(definition, clean=False))
    return found


def _bindings(body: Sequence[ast.stmt]) -> Iterator[tuple[str, _Definition | None]]:
    """(name, what binds it) in the order a module's or class's statements run: a class or function defined here,
    or None for an import (``from .dictutils import OrderedMultiDict`` after a local copy of it, as boltons'
    urlutils does). Also under ``if``/``try``/``with``/loops (the finder walks the namespace, wherever a name was
    bound), never inside a function, nor in an ``except`` block: the fallback of ``try: from x import A`` /
    ``except ImportError: class A`` is not what usually runs."""
    for statement in body:
        if isinstance(statement, _Definition):
            yield statement.name, statement
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            yield from ((alias.asname or alias.name.split(".")[0], None) for alias in statement.names)
        elif isinstance(statement, _BLOCKS):
            yield from _bindings(statement.body)
            yield from _bindings(getattr(statement, "orelse", []))
        elif isinstance(statement, _TRIES):
            for block in (statement.body, statement.orelse, statement.finalbody):
                yield from _bindings(block)


def _has_examples(docstring: str | None) -> bool:
    return bool(docstring and _EXAMPLE.search(docstring))
