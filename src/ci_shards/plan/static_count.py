"""How many tests a Python test file defines, read with ``ast`` (never imported). Pure.

Discovery plans a file without timings whole; this count is what its estimate is made of, so a
file of 400 parametrized cases is not planned like a file of three tests. The count follows
pytest's collection rules (``_pytest/python.py``: ``PyCollector.collect``, ``istestfunction``,
``istestclass``, ``Class.collect``; ``_pytest/unittest.py``) as far as the text shows them:

- module-level functions whose name matches ``python_functions`` (a prefix, or a glob when it has
  ``*?[``, as ``_matches_prefix_or_glob_option`` reads it), fixtures and properties aside;
- classes matching ``python_classes`` without an ``__init__`` or ``__new__`` of their own, and
  ``__test__ = False`` classes aside; their test methods, those inherited from base classes
  defined in the same file (a subclass collects them again, as pytest walks the MRO), and their
  nested test classes;
- subclasses of ``unittest.TestCase`` (a base named ``*TestCase``, or a class in the file that is
  one) whatever their name, with unittest's own rule: methods whose name starts with ``test``;
- parametrized fixtures (``@pytest.fixture(params=[...])``, the same rule for the list) a test
  asks for by an argument, directly or through other fixtures, multiply too: those the file
  defines, and those of the ``conftest.py`` files above it (``fixtures_in``, handed in by the
  caller; the nearest definition of a name wins, the file's own first);
- ``@pytest.mark.parametrize`` (on the function, its classes or ``pytestmark``) multiplies by the
  length of its argument list when that is a literal list, tuple or set, or a module-level name
  bound once to one (or a name of the class body that defines the method: class scope first), or
  ``range()`` of integer literals (``pytest.param(...)`` entries count one each; an empty list is
  one test, which pytest collects and skips); anything else (a call, a
  comprehension, an imported name) counts ``GUESSED_CASES`` and is counted in ``guessed``.
  Stacked parametrizes multiply. A list built from literals (a comprehension over a module-level
  list, ``list(itertools.product(...))``, a sum of lists) is computed from the text by
  ``static_values`` (no user code runs) before it counts as guessed.

- hypothesis' ``@given`` tests run many examples: each costs ``max_examples`` (a literal
  ``@settings(max_examples=N)`` on it, else ``CountRules.examples``: the profile a conftest loads,
  ``hypothesis_profiles``, else hypothesis' default ``HYPOTHESIS_EXAMPLES``) times
  ``EXAMPLE_TESTS`` tests (``FileCount.extra_units``);
- ``-m`` and ``-k`` (``CountRules.markexpr``/``keywordexpr``) are evaluated against what the text
  says (``mark_expr``): marks are the ``@pytest.mark.X`` decorators of the test and its classes and
  ``pytestmark``; names are the test's, its classes', the module's file name and its folders'.
  A test they deselect is still collected (``FileCount.deselected``); one they cannot decide (a
  parametrized test's ids, a case's own ``pytest.param(marks=...)``, ``mark(arg=...)``) counts as
  selected;
- a non-literal argument list in a file that names a data folder next to it (a path built from
  ``__file__`` and string literals, ``os.path.join(os.path.dirname(__file__), "data")`` or
  ``Path(__file__).parent / "data"``) is sized by the files in that folder (``files_in``, handed in
  by the edge), shared among the file's non-literal lists: data-driven tests are one case per file.
  A case is a name without its suffix (``x.toml`` beside its expected ``x.json`` is one), only of
  the suffixes the module's literal ``endswith``/glob patterns select when it has any; a named list
  file inside the folder counts its lines instead, and a folder named only to build a deeper
  path is not counted (``data_folders``).

- a module-level ``pytest.importorskip("name")`` (a statement of the module's body, its value kept or
  not) of a module the shards' interpreter does not have (``has_module``, handed in by the edge:
  ``importable``) skips the whole file at its import, as pytest does: it counts no test, only its
  import (``FileCount.skipped_at_import`` says how many it defines). Under an ``if``, in a function, or
  with the module present, the file counts as before.

What only running the file can tell is not seen: ``pytest_generate_tests``, fixtures from
plugins or defined in classes, tests imported from another module, base classes from another
module.
"""

from __future__ import annotations

import ast
import dataclasses
import fnmatch
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final

from ci_shards.plan import mark_expr
from ci_shards.plan.static_values import Foreign, Values

GUESSED_CASES: Final = 4  # a parametrize whose argument list is not literal (and no data folder)
# hypothesis' settings.default.max_examples (hypothesis/_settings.py: ``max_examples`` default 100)
HYPOTHESIS_EXAMPLES: Final = 100
# one example costs about one plain test: attrs 26.1.0's 60 @given tests took 56 s of a 65 s run
# (0.93 s each for 100 examples) against 6.8 ms per plain test, 1.4 tests per example; 1 is the
# round, cautious figure (many strategies are cheaper than attrs' class builders)
EXAMPLE_TESTS: Final = 1.0
# a test -m/-k deselects is collected, never run: click 8.5.1's 30,000 deselected stress cases
# cost 2.4 s of CPU to collect (80 µs each) against about 1.8 ms per test run and collected
DESELECTED_TESTS: Final = 0.05
DEFAULT_FUNCTIONS: Final = ("test",)  # pytest's python_functions default
DEFAULT_CLASSES: Final = ("Test",)  # pytest's python_classes default
UNITTEST_PREFIX: Final = "test"  # unittest.TestLoader.testMethodPrefix


@dataclasses.dataclass(frozen=True)
class CountRules:
    """The project's pytest settings and the run's options that decide what is a test and runs."""

    functions: tuple[str, ...] = DEFAULT_FUNCTIONS
    classes: tuple[str, ...] = DEFAULT_CLASSES
    markexpr: str = ""  # -m (the last one of addopts and the arguments, as pytest's parser keeps)
    keywordexpr: str = ""  # -k
    examples: int = HYPOTHESIS_EXAMPLES  # a @given test's max_examples without its own (a conftest's profile)


@dataclasses.dataclass(frozen=True)
class Fixture:
    params: int  # how many cases it makes each test that asks for it (1: not parametrized)
    requests: tuple[str, ...] = ()  # the fixtures it asks for itself


@dataclasses.dataclass(frozen=True)
class FileCount:
    tests: int  # the tests pytest would run (those -m/-k deselect aside)
    guessed: int = 0  # parametrize argument lists that were not literal, each counted GUESSED_CASES
    hypothesis: int = 0  # of ``tests``, those hypothesis' @given runs examples of
    extra_units: float = 0.0  # what their examples cost beyond one test each, in tests
    deselected: int = 0  # tests -m/-k deselect: collected, not run
    data_sized: int = 0  # of ``guessed``, the lists sized by the files of a data folder instead
    skipped_at_import: int = 0  # tests the file defines that a module-level importorskip of a missing module skips
    # the selected tests pytest collects under a known node id suffix (``TestA::test_x``), each with
    # its cases and what they cost in tests (times their examples): what discovery may cut the file into
    # (compared apart: a count is equal to another by its numbers)
    parts: tuple[tuple[str, int, float], ...] = dataclasses.field(default=(), compare=False)

    @property
    def units(self) -> float:
        """What the file costs, in tests: each test, its examples, its deselected tests' collection."""
        return self.tests + self.extra_units + self.deselected * DESELECTED_TESTS


@dataclasses.dataclass(frozen=True)
class DefinedTest:
    """One test function (or method) as pytest collects it: ``key`` is its node id after the file
    (``TestA::TestB::test_x``, without parameters), ``cases`` how many items it makes, ``units`` what
    one case costs in tests (hypothesis' examples), ``marks`` its marks' names (``marks_known``: no case
    carries marks of its own)."""

    key: str
    cases: int
    units: float = 1.0
    marks: frozenset[str] = frozenset()
    marks_known: bool = True
    named: bool = True  # pytest collects it under ``key`` for sure (defined unconditionally, never rebound)


# the edge's look at a named path: how many cases the file's folder / *parts holds with one of the
# suffixes (empty: any): a folder's files by name without suffix, a list file's lines (0: neither)
FilesIn = Callable[[tuple[str, ...], frozenset[str]], int]


def no_files(_parts: tuple[str, ...], _suffixes: frozenset[str]) -> int:
    return 0


# the edge's look at ``from <level dots><name> import ...`` in the module read from ``origin`` ("": the
# file being counted): the imported module's origin and tree when it is a file of the suite, else None
Imports = Callable[[str, int, str | None], "tuple[str, ast.Module] | None"]
IMPORT_DEPTH: Final = 4  # modules followed from the counted file through their imports, at most


def no_imports(_origin: str, _level: int, _name: str | None) -> None:
    return None


def every_module(_name: str) -> bool:
    """The ``has_module`` that knows of no missing module: no file is skipped at import."""
    return True


def count_tests(
    source: str | bytes,
    rules: CountRules = CountRules(),
    fixtures: Mapping[str, Fixture] | None = None,
    *,
    path_names: Sequence[str] = (),
    files_in: FilesIn = no_files,
    has_module: Callable[[str], bool] = every_module,
    imports: Imports = no_imports,
) -> FileCount:
    """The tests ``source`` defines, given the ``fixtures`` its conftests define; ``path_names``: the
    file's name and its folders' below the rootdir (what ``-k`` matches besides the test's names);
    ``has_module(name)``: whether the shards' interpreter can import module ``name`` (dotted or not);
    ``imports``: the suite's modules it imports classes from.
    Raises ``SyntaxError`` or ``ValueError`` (null bytes, a bad encoding declaration) when it is not
    Python; bytes are decoded as Python does (PEP 263)."""
    module = ast.parse(source)
    tests, guessed = defined_tests(module, rules, fixtures, imports=imports)
    if not all(has_module(name) for name in import_skips(module)):  # pytest skips the module at its import
        return FileCount(tests=0, skipped_at_import=sum(t.cases for t in tests))
    data_files = 0
    if guessed:  # only a non-literal list is sized by a data folder: no second walk of the module otherwise
        suffixes = literal_suffixes(module)
        data_files = max((files_in(parts, suffixes) for parts in data_folders(module)), default=0)
    sized = max(GUESSED_CASES, math.ceil(data_files / guessed)) if guessed else GUESSED_CASES
    if sized != GUESSED_CASES:  # the non-literal lists share the data folder's files
        tests, _ = defined_tests(module, rules, fixtures, guess=sized, imports=imports)
    keep = _selector(rules, path_names)
    count = deselected = given = 0
    extra = 0.0
    parts: dict[str, tuple[int, float]] = {}
    for test in tests:
        if keep(test) is False:
            deselected += test.cases
            continue
        count += test.cases
        if test.units != 1:
            given += test.cases
            extra += test.cases * (test.units - 1)
        if test.named:
            cases, units = parts.get(test.key, (0, 0.0))
            parts[test.key] = (cases + test.cases, units + test.cases * test.units)
    return FileCount(
        tests=count,
        guessed=guessed,
        hypothesis=given,
        extra_units=extra,
        deselected=deselected,
        data_sized=guessed if sized != GUESSED_CASES else 0,
        parts=tuple((key, cases, units) for key, (cases, units) in sorted(parts.items())),
    )


def defined_tests(
    module: ast.Module,
    rules: CountRules,
    fixtures: Mapping[str, Fixture] | None,
    *,
    guess: int = GUESSED_CASES,
    imports: Imports = no_imports,
) -> tuple[list[DefinedTest], int]:
    """Every test function the module defines, and how many argument lists were not literal
    (each counted ``guess`` cases). A test class imported from a module of the suite (``imports``)
    under a name pytest collects is collected here again, and a class's bases imported so give it
    their tests, as pytest walks the MRO: counted, never named (``DefinedTest.named``), since what
    another module binds under a name is read, not run."""
    counter = _Counter(
        rules, _literal_lengths(module.body), guess, Values(module.body, suite_names(module, "", imports))
    )
    counter.fixtures = {**(fixtures or {}), **counter.fixtures_of(module.body)}
    namespace = _namespace(module.body)
    counter.direct = _direct(module.body, _rebound(module.body))
    classes = class_names(module, "", imports, homes={}, done={})
    scope = _Scope(counter.marks_factor(_pytestmark(module.body)), _mark_names(_pytestmark(module.body)), ())
    tests: list[DefinedTest] = []
    for name, node in namespace.items():
        if isinstance(node, ast.ClassDef):
            tests += counter.class_tests(node, classes, scope)
        elif _matches(name, rules.functions) and counter.is_test_function(node):
            tests.append(counter.function_test(node, scope, method=False))
    assigned = _assigned_names(module.body)
    for name, node in classes.items():  # imported under a name pytest collects: collected here too
        collected = _matches(name, rules.classes) or _is_unittest(node, classes, ())  # by the name it is bound to
        if name not in namespace and name not in assigned and collected:
            imported = dataclasses.replace(scope, classes=(), named=False)
            for test in counter.class_tests(node, classes, imported):
                tests.append(dataclasses.replace(test, key=f"{name}{test.key[len(node.name) :]}"))
    return tests, counter.guessed


def _assigned_names(body: Sequence[ast.stmt]) -> set[str]:
    """The names ``body`` binds by assignment (an import they rebind is not what pytest finds)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def class_names(
    module: ast.Module,
    origin: str,
    imports: Imports,
    *,
    homes: dict[int, Mapping[str, ast.ClassDef]],
    done: dict[str, ClassNames],
    requested: frozenset[str] | None = None,
    depth: int = 0,
) -> ClassNames:
    """The classes ``module`` (read from ``origin``) defines and those its module-level ``from … import``
    statements bring from the suite's modules, each imported class's own module recorded in ``homes``.
    Only imports that can be a class pytest collects or a base are followed: a name written as a class
    (``CapWords``, a leading ``_`` aside) or a base of the module's classes, and in an imported module
    only the ``requested`` names and their bases; ``IMPORT_DEPTH`` modules deep at most. One
    ``ClassNames`` per origin (``done``), grown by each request for names not followed yet, so a cycle
    of imports ends and every class finds its bases in the one namespace of its module."""
    names = done.get(origin)
    if names is None:
        own = {name: node for name, node in _namespace(module.body).items() if isinstance(node, ast.ClassDef)}
        in_order = [node for node in _definitions(module.body) if isinstance(node, ast.ClassDef)]
        names = done[origin] = ClassNames(own, homes, in_order)
        homes.update({id(node): names for node in own.values()})
    if depth >= IMPORT_DEPTH:
        return names
    wanted = _base_closure(names.own, set(names.own) if requested is None else set(requested))
    for statement in module.body:
        # ``from . import Mixin``: the package's __init__.py (cachetools 8.0.2's tests take their mixins so)
        if not isinstance(statement, ast.ImportFrom) or not (statement.module or statement.level):
            continue
        aliases = [
            a
            for a in statement.names
            if (a.asname or a.name) not in names.followed
            and ((a.asname or a.name) in wanted or (requested is None and _class_like(a)))
        ]
        names.followed.update(a.asname or a.name for a in aliases)
        found = imports(origin, statement.level, statement.module or "") if aliases else None
        if found is None:
            continue
        target, tree = found
        asked = frozenset(a.name for a in aliases)
        theirs = class_names(tree, target, imports, homes=homes, done=done, requested=asked, depth=depth + 1)
        for alias in aliases:
            bound = alias.asname or alias.name
            if alias.name in theirs and bound not in names.own:
                names[bound] = theirs[alias.name]
            elif alias.name in theirs:  # rebound by a class of the module: a base of it until then
                names.imported[bound] = theirs[alias.name]
    return names


def _class_like(alias: ast.alias) -> bool:
    """Whether an imported name is written as a class is (PEP 8's ``CapWords``)."""
    return (alias.asname or alias.name).lstrip("_")[:1].isupper()


def _base_closure(own: Mapping[str, ast.ClassDef], names: set[str]) -> set[str]:
    """``names`` and the names the module's classes among them name as bases, transitively."""
    todo = list(names)
    while todo:
        node = own.get(todo.pop())
        for base in node.bases if node is not None else []:
            if isinstance(base, ast.Name) and base.id not in names:
                names.add(base.id)
                todo.append(base.id)
    return names


def weighted_tests(source: str | bytes, rules: CountRules = CountRules()) -> dict[str, float]:
    """What one case of each test costs in tests, by its node id after the file (``TestA::test_x``),
    for the tests that cost more than one (hypothesis' examples): a ``--pytest`` plan's weights."""
    tests, _ = defined_tests(ast.parse(source), rules, None)
    return {t.key: t.units for t in tests if t.units != 1}


def _selector(rules: CountRules, path_names: Sequence[str]) -> Callable[[DefinedTest], bool | None]:
    """Whether -m and -k keep a test: True, False, or None (undecided: counted as kept)."""
    deciders: list[tuple[mark_expr.Node, Callable[[DefinedTest], mark_expr.Decide]]] = []
    for text, decider in ((rules.markexpr, _mark_decider), (rules.keywordexpr, _keyword_decider(path_names))):
        try:
            if text:
                deciders.append((mark_expr.parse(text), decider))
        except mark_expr.ExpressionError:  # pytest refuses it when the shard runs, loudly
            pass

    def keep(test: DefinedTest) -> bool | None:
        values = [mark_expr.evaluate(tree, decider(test)) for tree, decider in deciders]
        return False if False in values else (None if None in values else True)

    return keep


def _mark_decider(test: DefinedTest) -> mark_expr.Decide:
    # a case's own pytest.param(marks=...) leaves the marks of the test's cases open
    return lambda name: True if name in test.marks else (False if test.marks_known else None)


def _keyword_decider(path_names: Sequence[str]) -> Callable[[DefinedTest], mark_expr.Decide]:
    """pytest's ``KeywordMatcher``: a case-insensitive substring of any name in the item's chain (its
    folders below the rootdir, its file, its classes, its own name with the parameter ids) or of a
    mark's name."""

    def for_test(test: DefinedTest) -> mark_expr.Decide:
        names = [n.lower() for n in (*path_names, *test.key.split("::"), *test.marks)]

        def decide(word: str) -> bool | None:
            if any(word.lower() in name for name in names):
                return True
            # a case's parameter id may hold it, or a case's own mark
            return None if test.cases > 1 or not test.marks_known else False

        return decide

    return for_test


def fixtures_in(source: str | bytes, imports: Imports = no_imports) -> dict[str, Fixture]:
    """The fixtures a ``conftest.py`` defines at module level (raises as ``count_tests`` does); ``imports``: the
    suite's modules its ``params`` lists may come from."""
    module = ast.parse(source)
    values = Values(module.body, suite_names(module, "", imports))
    return _Counter(CountRules(), _literal_lengths(module.body), values=values).fixtures_of(module.body)


def suite_names(module: ast.Module, origin: str, imports: Imports) -> Foreign:
    """What the module's top-level imports bind from the suite's other modules, for ``Values``: ``from .data import
    CASES`` (CASES of data.py), ``from . import ids`` and ``import tests.ids as ids`` (the module ids.py itself, whose
    names are its attributes). Each module is parsed once (``imports``), on the first list that names it; its own
    imports are not followed (a value it imports is unknown there, as any call)."""
    sources: dict[str, tuple[int, str, str | None]] = {}  # bound name → (level, module, its name there; None: module)
    for statement in module.body:
        if isinstance(statement, ast.ImportFrom) and (statement.module or statement.level):
            sources.update(
                {a.asname or a.name: (statement.level, statement.module or "", a.name) for a in statement.names}
            )
        elif isinstance(statement, ast.Import):
            sources.update({a.asname: (0, a.name, None) for a in statement.names if a.asname})
    loaded: dict[tuple[int, str], Values | None] = {}

    def values_of(level: int, name: str) -> Values | None:
        if (level, name) not in loaded:
            found = imports(origin, level, name)
            loaded[level, name] = Values(found[1].body) if found is not None else None
        return loaded[level, name]

    def foreign(name: str) -> tuple[Values, str | None] | None:
        level, module_name, there = sources.get(name, (0, "", None))
        if not module_name and not level:
            return None
        if there is not None and not module_name:  # ``from . import x``: the package's module x, else its name x
            submodule = values_of(level, there)
            if submodule is not None:
                return submodule, None
        found = values_of(level, module_name)
        return (found, there) if found is not None else None

    return foreign


def _arg_names(node: ast.FunctionDef | ast.AsyncFunctionDef, *, method: bool) -> list[str]:
    """The arguments pytest fills with fixtures: none with a default, not ``self``/``cls`` of a
    method (``_pytest.compat.getfuncargnames``)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    positional = positional[: len(positional) - len(args.defaults)]
    if method and "staticmethod" not in (_decorator_name(d) for d in node.decorator_list):
        positional = positional[1:]
    keywords = [a for a, default in zip(args.kwonlyargs, args.kw_defaults, strict=True) if default is None]
    return [a.arg for a in [*positional, *keywords]]


def _given_names(node: ast.expr) -> set[str]:
    """The arguments hypothesis' ``@given(name=strategy)`` fills by name."""
    if isinstance(node, ast.Call) and _decorator_name(node) == "given":
        return {k.arg for k in node.keywords if k.arg}
    return set()


def _argnames(mark: ast.Call) -> set[str]:
    """The names a ``parametrize(...)`` gives values to (``"a, b"`` or a list of strings)."""
    first = mark.args[0] if mark.args else next((k.value for k in mark.keywords if k.arg == "argnames"), None)
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return {n.strip() for n in first.value.split(",") if n.strip()}
    if isinstance(first, ast.List | ast.Tuple):
        return {e.value for e in first.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(name.startswith(p) or (any(c in p for c in "*?[") and fnmatch.fnmatch(name, p)) for p in patterns)


Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _definitions(body: Sequence[ast.stmt]) -> Iterator[Definition]:
    """Functions and classes a body defines, in order, also under ``if``/``try``/``with`` (a test
    defined only on some Python version still counts once)."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node
        elif isinstance(node, ast.If):
            yield from _definitions([*node.body, *node.orelse])
        elif isinstance(node, ast.Try):
            yield from _definitions([*node.body, *node.orelse, *node.finalbody])
            for handler in node.handlers:
                yield from _definitions(handler.body)
        elif isinstance(node, ast.With | ast.AsyncWith):
            yield from _definitions(node.body)


def _namespace(body: Sequence[ast.stmt]) -> dict[str, Definition]:
    """Name → definition as the module's (or class's) ``__dict__`` would hold it: the last wins."""
    return {node.name: node for node in _definitions(body)}


def _assigned(body: Sequence[ast.stmt], name: str) -> ast.expr | None:
    """The value of a plain ``name = ...`` in ``body`` (the last one)."""
    value = None
    for node in body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            value = node.value
    return value


def _pytestmark(body: Sequence[ast.stmt]) -> list[ast.expr]:
    value = _assigned(body, "pytestmark")
    if value is None:
        return []
    return list(value.elts) if isinstance(value, ast.List | ast.Tuple) else [value]


def _literal_lengths(body: Sequence[ast.stmt]) -> dict[str, int | ast.Call]:
    """Module-level names bound exactly once to a literal collection (its length) or to a
    ``parametrize(...)`` mark (the call, for ``@name``)."""
    bound: dict[str, list[ast.expr]] = {}
    for node in body:
        pairs: list[tuple[ast.expr, ast.expr]] = []
        if isinstance(node, ast.Assign):
            pairs = [(target, node.value) for target in node.targets]
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            pairs = [(node.target, node.value)]
        for target, value in pairs:
            if isinstance(target, ast.Name):
                bound.setdefault(target.id, []).append(value)
    found: dict[str, int | ast.Call] = {}
    for name, values in bound.items():
        length = _literal_length(values[0]) if len(values) == 1 else None
        mark = _parametrize(values[0]) if len(values) == 1 else None
        if length is not None:
            found[name] = length
        elif mark is not None:
            found[name] = mark
    return found


def _literal_length(node: ast.expr) -> int | None:
    """How many entries a literal list, tuple or set holds, or ``range(...)`` of integer literals
    yields (None for anything else, ``*rest`` included)."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return len(node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        bounds = [a.value for a in node.args if isinstance(a, ast.Constant) and type(a.value) is int]
        if len(bounds) == len(node.args) and 1 <= len(bounds) <= 3 and not node.keywords and bounds[2:] != [0]:
            try:
                return len(range(*bounds))
            except OverflowError:  # more cases than an index holds: nobody collects those
                return None
    return None


def _parametrize(node: ast.expr) -> ast.Call | None:
    """``node`` if it is a ``parametrize(...)`` call (``pytest.mark.parametrize``, ``mark.parametrize``)."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    named = (isinstance(func, ast.Attribute) and func.attr == "parametrize") or (
        isinstance(func, ast.Name) and func.id == "parametrize"
    )
    return node if named else None


def _mark_names(marks: Sequence[ast.expr]) -> frozenset[str]:
    """The names of ``pytest.mark.X`` / ``mark.X`` marks (``X(...)`` too) among decorators."""
    names = set()
    for mark in marks:
        func = mark.func if isinstance(mark, ast.Call) else mark
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute | ast.Name):
            owner = func.value.attr if isinstance(func.value, ast.Attribute) else func.value.id
            if owner == "mark":
                names.add(func.attr)
    return frozenset(names)


def _case_marks(mark: ast.Call) -> bool:
    """Whether a parametrize's cases carry marks of their own (``pytest.param(..., marks=...)``)."""
    values = (
        mark.args[1] if len(mark.args) > 1 else next((k.value for k in mark.keywords if k.arg == "argvalues"), None)
    )
    if not isinstance(values, ast.List | ast.Tuple | ast.Set):
        return False
    return any(isinstance(e, ast.Call) and any(k.arg == "marks" for k in e.keywords) for e in values.elts)


def _examples(node: ast.FunctionDef | ast.AsyncFunctionDef, default: int = HYPOTHESIS_EXAMPLES) -> int | None:
    """How many examples hypothesis runs of a ``@given`` test (None: not one)."""
    if not any(_decorator_name(d) == "given" for d in node.decorator_list):
        return None
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call) and _decorator_name(decorator) == "settings":
            value = next((k.value for k in decorator.keywords if k.arg == "max_examples"), None)
            if isinstance(value, ast.Constant) and type(value.value) is int and value.value > 0:
                return value.value
    return default


def data_folders(module: ast.Module) -> list[tuple[str, ...]]:
    """The folders the module names below its own: paths built from ``__file__`` and string
    literals (``os.path.join(os.path.dirname(__file__), "data")``, ``Path(__file__).parent / "data"``),
    also through module-level names, as parts relative to the file's folder."""
    bound: dict[str, ast.expr] = {}
    for node in module.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound[node.targets[0].id] = node.value
    found = set()
    for expr in ast.walk(module):
        parts = _path_parts(expr, bound, 0) if isinstance(expr, ast.expr) else None
        if parts:
            found.add(parts)
    # a path the module names only to build a deeper one from is not where its cases are (tomlkit
    # 0.15.2: its toml-test/tests folder holds 1,017 files, the list file inside it names 680 cases)
    return sorted(p for p in found if not any(len(q) > len(p) and q[: len(p)] == p for q in found))


_GLOBS: Final = frozenset({"glob", "iglob", "rglob", "fnmatch", "fnmatchcase", "filter"})


def import_skips(module: ast.Module) -> tuple[str, ...]:
    """The modules the module's own body asks ``pytest.importorskip`` for (``np = pytest.importorskip("numpy")``,
    ``pytest.importorskip("scipy.sparse")``: a dotted name is the submodule's): without one of them pytest skips
    the whole module when it imports it. Calls under ``if``/``try`` or in a function are not certain to run and
    are left out. The modules a module-level ``try`` imports count too when its ``except ImportError`` skips the
    module (``pytest.skip(..., allow_module_level=True)``, ``raise unittest.SkipTest``; structlog 26.1.0's
    tests/test_twisted.py): pytest skips it the same way."""
    names: list[str] = []
    for node in module.body:
        if isinstance(node, ast.Try) and any(_skips_module(h) for h in node.handlers):
            names += _imported_modules(node.body)
        value = node.value if isinstance(node, ast.Expr | ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Call) and _decorator_name(value) == "importorskip" and value.args:
            first = value.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value:
                names.append(first.value)
    return tuple(dict.fromkeys(names))


_IMPORT_ERRORS: Final = frozenset({"ImportError", "ModuleNotFoundError"})


def _skips_module(handler: ast.ExceptHandler) -> bool:
    """Whether ``handler`` catches a missing module's error and skips the whole module: a statement of its own
    body calls ``pytest.skip(..., allow_module_level=True)`` (without it pytest reports an error) or raises
    ``SkipTest`` (pytest's collector reports unittest's skip as a skip too)."""
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    if not any(t is None or _decorator_name(t) in _IMPORT_ERRORS for t in caught):
        return False
    for statement in handler.body:
        raised = statement.exc if isinstance(statement, ast.Raise) else None
        if raised is not None and _decorator_name(raised) == "SkipTest":
            return True
        call = statement.value if isinstance(statement, ast.Expr) else None
        if isinstance(call, ast.Call) and _decorator_name(call) == "skip" and _allows_module_level(call):
            return True
    return False


def _allows_module_level(call: ast.Call) -> bool:
    return any(k.arg == "allow_module_level" and _is_true(k.value) for k in call.keywords)


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _imported_modules(body: Sequence[ast.stmt]) -> list[str]:
    """The modules the import statements of ``body`` name (a relative import is the suite's own)."""
    names: list[str] = []
    for node in body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.append(node.module)
    return names


def literal_suffixes(module: ast.Module) -> frozenset[str]:
    """The file suffixes the module's code selects its data by: literal ``x.endswith(".toml")`` (or a
    tuple of them) and glob patterns ending ``*.ext`` (``glob``, ``Path.rglob``, ``fnmatch``).
    Empty when it names none: then every file is a case."""
    found: set[str] = set()
    for node in ast.walk(module):
        if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Attribute, ast.Name)):
            continue
        name = _decorator_name(node)
        if name == "endswith" and node.args:
            arg = node.args[0]
            for value in arg.elts if isinstance(arg, ast.Tuple) else [arg]:
                if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value.startswith("."):
                    found.add(value.value)
        elif name in _GLOBS:  # the pattern may be built: glob.glob(os.path.join(ROOT, "**/*.toml"))
            for built in (n for arg in node.args for n in ast.walk(arg)):
                if isinstance(built, ast.Constant) and isinstance(built.value, str):
                    star = built.value.rfind("*")  # "**/*.toml", "case_*.txt": what follows the last "*"
                    tail = built.value[star + 1 :] if star >= 0 else ""
                    if tail.startswith(".") and tail.count(".") == 1 and not any(c in tail for c in "?[/"):
                        found.add(tail)
    return frozenset(found)


_FOLDER_OF_FILE: Final = frozenset({"dirname", "parent"})
_SAME_PATH: Final = frozenset({"abspath", "realpath", "resolve", "absolute", "normpath", "Path", "PurePath"})


def _path_parts(node: ast.expr, bound: Mapping[str, ast.expr], depth: int) -> tuple[str, ...] | None:
    """``node`` as a path below the module's folder (``()`` is the folder itself), or None."""
    if depth > 20:
        return None
    if isinstance(node, ast.Name):
        value = bound.get(node.id)
        return _path_parts(value, bound, depth + 1) if value is not None else None
    inner = _first_operand(node)
    if inner is not None and _is_file(inner):
        return () if _decorator_name(node) in _FOLDER_OF_FILE or _is_parent(node) else None
    if isinstance(node, ast.Call) and _decorator_name(node) in _SAME_PATH and len(node.args) == 1:
        return _path_parts(node.args[0], bound, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SAME_PATH:
        return _path_parts(node.func.value, bound, depth + 1)  # Path(...).resolve()
    joined: list[ast.expr] = []
    if isinstance(node, ast.Call) and _decorator_name(node) == "join" and node.args:
        joined = list(node.args)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        joined = [node.left, node.right]
    if joined:
        base = _path_parts(joined[0], bound, depth + 1)
        rest = [a.value for a in joined[1:] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        literal = all(r and ".." not in r and not any(c in r for c in "*?[") for r in rest)  # a glob: no path
        if base is not None and len(rest) == len(joined) - 1 and literal:
            return (*base, *(p for r in rest for p in r.split("/") if p))
    return None


def _first_operand(node: ast.expr) -> ast.expr | None:
    """What ``dirname(x)``, ``x.parent``, ``Path(x).resolve().parent`` are taken of (``x``, unwrapped)."""
    if isinstance(node, ast.Call) and _decorator_name(node) == "dirname" and len(node.args) == 1:
        node = node.args[0]
    elif isinstance(node, ast.Attribute) and node.attr == "parent":
        node = node.value
    else:
        return None
    while isinstance(node, ast.Call):
        if _decorator_name(node) in _SAME_PATH and len(node.args) == 1:
            node = node.args[0]
        elif isinstance(node.func, ast.Attribute) and node.func.attr in _SAME_PATH and not node.args:
            node = node.func.value
        else:
            break
    return node


def _is_file(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "__file__"


def _is_parent(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "parent"


def _decorator_name(node: ast.expr) -> str:
    """The last name of a decorator (``pytest.fixture(scope=...)`` → ``fixture``)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


@dataclasses.dataclass(frozen=True)
class _Scope:
    """What a test inherits from its module and enclosing classes."""

    factor: int  # the parametrize product
    marks: frozenset[str]
    classes: tuple[str, ...]  # the enclosing classes' names, outermost first
    named: bool = True  # every enclosing class is defined unconditionally


class _Counter:
    """The counting walk; ``guessed`` grows with every non-literal parametrize it meets."""

    def __init__(
        self,
        rules: CountRules,
        names: Mapping[str, int | ast.Call],
        guess: int = GUESSED_CASES,
        values: Values | None = None,
    ) -> None:
        self.rules = rules
        self.names = names
        # the names of the class body a method is defined in, bound once to a literal list: a decorator
        # there reads them before the module's (class scope first, then the module's globals)
        self.class_names: Mapping[str, int | ast.Call] = {}
        self.values = values
        self.guess = guess
        self.guessed = 0
        self.fixtures: Mapping[str, Fixture] = {}
        self.direct: set[int] = set()  # ids of the definitions pytest surely finds under their names

    def cases(self, mark: ast.Call) -> int:
        values = next((k.value for k in mark.keywords if k.arg == "argvalues"), None)
        return self.length(mark.args[1] if len(mark.args) > 1 else values)

    def fixtures_of(self, body: Sequence[ast.stmt]) -> dict[str, Fixture]:
        """The fixtures ``body`` defines: their name (``name=`` or the function's), their
        ``params`` cases (1 without), the fixtures they ask for."""
        found: dict[str, Fixture] = {}
        for node in _definitions(body):
            decorator = next((d for d in node.decorator_list if _decorator_name(d) == "fixture"), None)
            if decorator is None or isinstance(node, ast.ClassDef):
                continue
            keywords = {k.arg: k.value for k in decorator.keywords} if isinstance(decorator, ast.Call) else {}
            name = keywords.get("name")
            key = name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else node.name
            params = self.length(keywords["params"]) if "params" in keywords else 1
            found[key] = Fixture(params, tuple(_arg_names(node, method=False)))
        return found

    def fixture_factor(self, requested: Sequence[str], given: set[str]) -> int:
        """The cases the parametrized fixtures among ``requested`` (and those they ask for) make;
        a name the test's own parametrize ``given`` overrides its fixture, as in pytest."""
        seen = set(given)
        todo = list(requested)
        factor = 1
        while todo:
            name = todo.pop()
            fixture = self.fixtures.get(name) if name not in seen else None
            seen.add(name)
            if fixture is not None:
                factor *= fixture.params
                todo += fixture.requests
        return factor

    def length(self, values: ast.expr | None) -> int:
        """The cases of an argument list: literal, a module-level literal name, else guessed."""
        length = _literal_length(values) if values is not None else None
        if length is None and isinstance(values, ast.Name):
            named = self.class_names.get(values.id, self.names.get(values.id))
            length = named if isinstance(named, int) else None
        if length is None and values is not None and self.values is not None:
            length = self.values.length(values)  # built from the text: a comprehension, a sum of lists
        if length is None:
            self.guessed += 1
            return self.guess
        return max(length, 1)

    def parametrizes(self, marks: Sequence[ast.expr]) -> list[ast.Call]:
        """The parametrizes among ``marks`` (decorators or ``pytestmark`` entries), ``@name`` included."""
        found = []
        for mark in marks:
            named = self.names.get(mark.id) if isinstance(mark, ast.Name) else None
            call = named if isinstance(named, ast.Call) else _parametrize(mark)
            if call is not None:
                found.append(call)
        return found

    def marks_factor(self, marks: Sequence[ast.expr]) -> int:
        """The product of the parametrizes among ``marks``."""
        return math.prod(self.cases(call) for call in self.parametrizes(marks))

    def function_test(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: _Scope, *, method: bool
    ) -> DefinedTest:
        """The test's own parametrizes times the parametrized fixtures it asks for (an argument a
        parametrize or hypothesis' ``@given(name=...)`` fills is no fixture), and its marks."""
        own = self.parametrizes(node.decorator_list)
        given = set().union(*(_argnames(m) for m in own))
        requested = _arg_names(node, method=method)
        for decorator in node.decorator_list:
            given |= _given_names(decorator)
            if isinstance(decorator, ast.Call) and _decorator_name(decorator) == "given" and decorator.args:
                given |= set(requested[-len(decorator.args) :])  # positional strategies fill the last ones
        cases = scope.factor * self.marks_factor(node.decorator_list) * self.fixture_factor(requested, given)
        examples = _examples(node, self.rules.examples)
        marks = scope.marks | _mark_names(node.decorator_list) | ({"parametrize"} if own else set())
        return DefinedTest(
            key="::".join((*scope.classes, node.name)),
            cases=cases,
            units=EXAMPLE_TESTS * examples if examples is not None else 1.0,
            marks_known=not any(_case_marks(m) for m in own),
            marks=frozenset(marks),
            named=scope.named and id(node) in self.direct,
        )

    @staticmethod
    def is_test_function(node: Definition) -> bool:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return False
        return not any(_decorator_name(d) in ("fixture", "property", "cached_property") for d in node.decorator_list)

    def class_tests(self, node: ast.ClassDef, classes: Mapping[str, ast.ClassDef], outer: _Scope) -> list[DefinedTest]:
        """Tests of one class if pytest collects it (else none), its nested classes' included;
        ``outer``: what the module and the enclosing classes give its tests."""
        unittest = _is_unittest(node, classes, ())
        if not (unittest or _matches(node.name, self.rules.classes)) or node.name in outer.classes:
            return []
        members = _members(node, classes, ())
        if _false_test(node, classes, ()):
            return []
        own_marks = [*node.decorator_list, *_pytestmark(node.body)]
        named = outer.named and id(node) in self.direct
        scope = _Scope(outer.factor, outer.marks | _mark_names(own_marks), (*outer.classes, node.name), named)
        if unittest:  # unittest's loader: test* methods, no parametrize (TestCase has its own __init__)
            return [
                dataclasses.replace(self.function_test(m, scope, method=True), cases=1)
                for name, (m, _owner) in members.items()
                if name.startswith(UNITTEST_PREFIX) and self.is_test_function(m) and not isinstance(m, ast.ClassDef)
            ]
        if "__init__" in members or "__new__" in members:  # pytest warns and collects nothing
            return []
        scope = dataclasses.replace(scope, factor=scope.factor * self.marks_factor(own_marks))
        outer_fixtures = self.fixtures
        # the class's fixtures (its own and its bases') serve its tests and its nested classes', over the module's
        self.fixtures = {**outer_fixtures, **self.fixtures_of([m for m, _owner in members.values()])}
        try:
            return self._member_tests(members, classes, scope)
        finally:
            self.fixtures = outer_fixtures

    def _member_tests(
        self, members: Mapping[str, tuple[Definition, ast.ClassDef]], classes: Mapping[str, ast.ClassDef], scope: _Scope
    ) -> list[DefinedTest]:
        """The tests of a collected class's ``members``, its nested classes' included."""
        lengths: dict[int, Mapping[str, int | ast.Call]] = {}  # each defining class body's literal lists, once
        tests: list[DefinedTest] = []
        for name, (member, owner) in members.items():
            if isinstance(member, ast.ClassDef):
                tests += self.class_tests(member, classes, scope)
            elif _matches(name, self.rules.functions) and self.is_test_function(member):
                if id(owner) not in lengths:
                    lengths[id(owner)] = _literal_lengths(owner.body)
                self.class_names = lengths[id(owner)]
                try:
                    tests.append(self.function_test(member, scope, method=True))
                finally:
                    self.class_names = {}
        return tests


def _rebound(body: Sequence[ast.stmt]) -> set[str]:
    """Names a body also binds by assignment or import: what pytest finds under them may not be the definition."""
    names = _assigned_names(body)
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _direct(body: Sequence[ast.stmt], rebound: set[str]) -> set[int]:
    """The ids of the functions and classes defined directly in ``body`` (not under ``if``/``try``:
    a Python version or a missing import may leave them out) and not rebound, their classes' such
    members included: the definitions pytest collects under their names for sure."""
    direct: set[int] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name not in rebound:
            direct.add(id(node))
            if isinstance(node, ast.ClassDef):
                direct |= _direct(node.body, _rebound(node.body))
    return direct


class ClassNames(dict[str, ast.ClassDef]):
    """A module's classes by name, its own and those it imports from a module of the suite; ``homes``
    gives each imported class the names of its own module, where its bases are looked up."""

    def __init__(
        self,
        own: Mapping[str, ast.ClassDef],
        homes: dict[int, Mapping[str, ast.ClassDef]],
        in_order: Sequence[ast.ClassDef] = (),
    ) -> None:
        super().__init__(own)
        self.own = dict(own)
        self.homes = homes
        self.followed: set[str] = set()  # the names whose imports were followed (a later request adds to them)
        # imported classes whose name a class of the module rebinds (pyflakes 4.1.0's ``from
        # test_other import Test as TestOther`` then ``class TestOther(TestOther)``): what the name holds
        # before that class statement
        self.imported: dict[str, ast.ClassDef] = {}
        # the module's class statements in source order: a base is the class its name is bound to when the
        # class statement runs, so ``class TestA(TestA)`` inherits the TestA defined above it
        self.position = {id(node): n for n, node in enumerate(in_order)}
        self.defined: dict[str, list[ast.ClassDef]] = {}
        for node in in_order:
            self.defined.setdefault(node.name, []).append(node)

    def of(self, node: ast.ClassDef) -> Mapping[str, ast.ClassDef]:
        return self.homes.get(id(node), self)

    def base_of(self, node: ast.ClassDef, name: str) -> ast.ClassDef | None:
        """The class ``name`` is bound to when ``node``'s class statement runs: the last class of that
        name defined above it in this module, else the class imported under it (imports come first); a
        nested class, or a name no class statement here defines, looks it up as the module ends."""
        at = self.position.get(id(node))
        if at is None or name not in self.defined:
            found = self.get(name)
            return found if found is not node else None
        above = [c for c in self.defined[name] if self.position[id(c)] < at]
        return above[-1] if above else self.imported.get(name)


def _bases(node: ast.ClassDef, classes: Mapping[str, ast.ClassDef]) -> Iterator[ast.ClassDef | str]:
    """Each base: the class defined in this file (or imported from a module of the suite), else its
    written name (``unittest.TestCase``)."""
    names = classes.of(node) if isinstance(classes, ClassNames) else classes
    for base in node.bases:
        name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""
        if not isinstance(base, ast.Name):
            local = None
        elif isinstance(names, ClassNames):
            local = names.base_of(node, name)
        else:
            local = names.get(name)
        yield local if local is not None and local is not node else name


def _members(
    node: ast.ClassDef, classes: Mapping[str, ast.ClassDef], seen: tuple[int, ...]
) -> dict[str, tuple[Definition, ast.ClassDef]]:
    """The class's functions and classes with those inherited from bases in this file (or imported
    from the suite's modules), each with the class that defines it; the class's own and the earlier
    bases' win (close enough to the MRO for counting). ``seen``: the classes below it, by id (a cycle
    of names is not followed)."""
    members: dict[str, tuple[Definition, ast.ClassDef]] = {}
    for base in reversed(list(_bases(node, classes))):
        if isinstance(base, ast.ClassDef) and id(base) not in seen:
            members.update(_members(base, classes, (*seen, id(node))))
    members.update({name: (member, node) for name, member in _namespace(node.body).items()})
    return members


def _is_unittest(node: ast.ClassDef, classes: Mapping[str, ast.ClassDef], seen: tuple[int, ...]) -> bool:
    for base in _bases(node, classes):
        if isinstance(base, str) and base.endswith("TestCase"):
            return True
        if isinstance(base, ast.ClassDef) and id(base) not in seen and _is_unittest(base, classes, (*seen, id(node))):
            return True
    return False


def _false_test(node: ast.ClassDef, classes: Mapping[str, ast.ClassDef], seen: tuple[int, ...]) -> bool:
    """``__test__ = False`` in the class or, unless it sets its own, a base in this file (inherited)."""
    value = _assigned(node.body, "__test__")
    if value is not None:
        return isinstance(value, ast.Constant) and value.value is False
    return any(
        isinstance(base, ast.ClassDef) and id(base) not in seen and _false_test(base, classes, (*seen, id(node)))
        for base in _bases(node, classes)
    )
