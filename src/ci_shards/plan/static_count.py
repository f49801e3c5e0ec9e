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
  bound once to one, or ``range()`` of integer literals (``pytest.param(...)`` entries count one
  each; an empty list is one test, which pytest collects and skips); anything else (a call, a
  comprehension, an imported name) counts ``GUESSED_CASES`` and is counted in ``guessed``.
  Stacked parametrizes multiply.

What only running the file can tell is not seen: ``pytest_generate_tests``, fixtures from
plugins or defined in classes, tests imported from another module, base classes from another
module.
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

GUESSED_CASES: Final = 4  # a parametrize whose argument list is not literal
DEFAULT_FUNCTIONS: Final = ("test",)  # pytest's python_functions default
DEFAULT_CLASSES: Final = ("Test",)  # pytest's python_classes default
UNITTEST_PREFIX: Final = "test"  # unittest.TestLoader.testMethodPrefix


@dataclass(frozen=True)
class CountRules:
    """The project's pytest settings that decide what is a test."""

    functions: tuple[str, ...] = DEFAULT_FUNCTIONS
    classes: tuple[str, ...] = DEFAULT_CLASSES


@dataclass(frozen=True)
class Fixture:
    params: int  # how many cases it makes each test that asks for it (1: not parametrized)
    requests: tuple[str, ...] = ()  # the fixtures it asks for itself


@dataclass(frozen=True)
class FileCount:
    tests: int
    guessed: int = 0  # parametrize argument lists that were not literal, each counted GUESSED_CASES


def count_tests(
    source: str | bytes, rules: CountRules = CountRules(), fixtures: Mapping[str, Fixture] | None = None
) -> FileCount:
    """The tests ``source`` defines, given the ``fixtures`` its conftests define. Raises
    ``SyntaxError`` or ``ValueError`` (null bytes, a bad encoding declaration) when it is not
    Python; bytes are decoded as Python does (PEP 263)."""
    module = ast.parse(source)
    counter = _Counter(rules, _literal_lengths(module.body))
    counter.fixtures = {**(fixtures or {}), **counter.fixtures_of(module.body)}
    namespace = _namespace(module.body)
    classes = {name: node for name, node in namespace.items() if isinstance(node, ast.ClassDef)}
    factor = counter.marks_factor(_pytestmark(module.body))
    tests = 0
    for name, node in namespace.items():
        if isinstance(node, ast.ClassDef):
            tests += counter.class_tests(node, classes, factor, ())
        elif _matches(name, rules.functions) and counter.is_test_function(node):
            tests += factor * counter.function_factor(node, method=False)
    return FileCount(tests=tests, guessed=counter.guessed)


def fixtures_in(source: str | bytes) -> dict[str, Fixture]:
    """The fixtures a ``conftest.py`` defines at module level (raises as ``count_tests`` does)."""
    module = ast.parse(source)
    return _Counter(CountRules(), _literal_lengths(module.body)).fixtures_of(module.body)


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


def _decorator_name(node: ast.expr) -> str:
    """The last name of a decorator (``pytest.fixture(scope=...)`` → ``fixture``)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


class _Counter:
    """The counting walk; ``guessed`` grows with every non-literal parametrize it meets."""

    def __init__(self, rules: CountRules, names: Mapping[str, int | ast.Call]) -> None:
        self.rules = rules
        self.names = names
        self.guessed = 0
        self.fixtures: Mapping[str, Fixture] = {}

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
            named = self.names.get(values.id)
            length = named if isinstance(named, int) else None
        if length is None:
            self.guessed += 1
            return GUESSED_CASES
        return max(length, 1)

    def marks_factor(self, marks: Sequence[ast.expr]) -> int:
        """The product of the parametrizes among ``marks`` (decorators or ``pytestmark`` entries)."""
        factor = 1
        for mark in marks:
            named = self.names.get(mark.id) if isinstance(mark, ast.Name) else None
            call = named if isinstance(named, ast.Call) else _parametrize(mark)
            if call is not None:
                factor *= self.cases(call)
        return factor

    def function_factor(self, node: ast.FunctionDef | ast.AsyncFunctionDef, *, method: bool) -> int:
        """The test's own parametrizes times the parametrized fixtures it asks for (an argument a
        parametrize or hypothesis' ``@given(name=...)`` fills is no fixture)."""
        given = set().union(*(_argnames(m) for m in map(_parametrize, node.decorator_list) if m is not None))
        requested = _arg_names(node, method=method)
        for decorator in node.decorator_list:
            given |= _given_names(decorator)
            if isinstance(decorator, ast.Call) and _decorator_name(decorator) == "given" and decorator.args:
                given |= set(requested[-len(decorator.args) :])  # positional strategies fill the last ones
        return self.marks_factor(node.decorator_list) * self.fixture_factor(requested, given)

    @staticmethod
    def is_test_function(node: Definition) -> bool:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return False
        return not any(_decorator_name(d) in ("fixture", "property", "cached_property") for d in node.decorator_list)

    def class_tests(
        self, node: ast.ClassDef, classes: Mapping[str, ast.ClassDef], factor: int, outer: tuple[str, ...]
    ) -> int:
        """Tests of one class if pytest collects it (else 0), its nested classes' included;
        ``factor`` is the parametrize product of the module and the enclosing classes."""
        unittest = _is_unittest(node, classes, ())
        if not (unittest or _matches(node.name, self.rules.classes)) or node.name in outer:
            return 0
        members = _members(node, classes, ())
        if _false_test(node, classes, ()):
            return 0
        if unittest:  # unittest's loader: test* methods, no parametrize (TestCase has its own __init__)
            return sum(
                1 for name, m in members.items() if name.startswith(UNITTEST_PREFIX) and self.is_test_function(m)
            )
        if "__init__" in members or "__new__" in members:  # pytest warns and collects nothing
            return 0
        factor *= self.marks_factor([*node.decorator_list, *_pytestmark(node.body)])
        tests = 0
        for name, member in members.items():
            if isinstance(member, ast.ClassDef):
                tests += self.class_tests(member, classes, factor, (*outer, node.name))
            elif _matches(name, self.rules.functions) and self.is_test_function(member):
                tests += factor * self.function_factor(member, method=True)
        return tests


def _bases(node: ast.ClassDef, classes: Mapping[str, ast.ClassDef]) -> Iterator[ast.ClassDef | str]:
    """Each base: the class defined in this file, else its written name (``unittest.TestCase``)."""
    for base in node.bases:
        name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""
        local = classes.get(name) if isinstance(base, ast.Name) else None
        yield local if local is not None and local is not node else name


def _members(node: ast.ClassDef, classes: Mapping[str, ast.ClassDef], seen: tuple[str, ...]) -> dict[str, Definition]:
    """The class's functions and classes with those inherited from bases in this file; the class's
    own and the earlier bases' win (close enough to the MRO for counting)."""
    members: dict[str, Definition] = {}
    for base in reversed(list(_bases(node, classes))):
        if isinstance(base, ast.ClassDef) and base.name not in seen:
            members.update(_members(base, classes, (*seen, node.name)))
    members.update(_namespace(node.body))
    return members


def _is_unittest(node: ast.ClassDef, classes: Mapping[str, ast.ClassDef], seen: tuple[str, ...]) -> bool:
    for base in _bases(node, classes):
        if isinstance(base, str) and base.endswith("TestCase"):
            return True
        if isinstance(base, ast.ClassDef) and base.name not in seen and _is_unittest(base, classes, (*seen, node.name)):
            return True
    return False


def _false_test(node: ast.ClassDef, classes: Mapping[str, ast.ClassDef], seen: tuple[str, ...]) -> bool:
    """``__test__ = False`` in the class or, unless it sets its own, a base in this file (inherited)."""
    value = _assigned(node.body, "__test__")
    if value is not None:
        return isinstance(value, ast.Constant) and value.value is False
    return any(
        isinstance(base, ast.ClassDef) and base.name not in seen and _false_test(base, classes, (*seen, node.name))
        for base in _bases(node, classes)
    )
