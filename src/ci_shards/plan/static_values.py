"""How long a parametrize argument list is when it is built, not written out: computed from the text. Pure.

``static_count`` reads a literal list's length off the ``ast``; many suites build theirs instead
(packaging 26.4's ``tests/test_version.py``: two comprehensions over pairs of a 92-entry literal
list make 51,000 of its 51,524 cases, which a guess of 4 cases each leaves out, so the file that
holds 80 % of the suite's tests was planned as 6 % of it). ``Values.length`` evaluates such an
expression with a small interpreter over the ``ast`` that knows only literals, the module's own
names bound to such expressions, comprehensions, slicing, arithmetic, comparisons and a fixed set
of pure builtins and ``itertools`` functions. Nothing of the user's code runs and nothing is
imported: any other name or call is an opaque value, fine as an entry of a list (``operator.lt``,
``pytest.param(...)``, ``Version("1")``) but never iterated, compared, hashed or called; meeting
one there makes the length unknown (None), and the count falls back to its guess. Work is bounded
(``MAX_STEPS`` evaluations, ``MAX_ENTRIES`` per built collection, integers below ``MAX_INT``): an adversarial
expression stops at ``MAX_STEPS``, about 2.7 CPU s here (``[[a, b] for a in range(500000) for b in
range(500000)]``, tests/unit/plan/test_static_values.py), a few steps per entry of the largest lists it still
counts (packaging's 52,670 pairs: 317,000 steps); a module's lengths together stop at ``MAX_MODULE_STEPS``
(packaging's ``tests/test_version.py``, the largest real one seen, spends 258,000), so a file of many such
expressions costs a few seconds at most, not 2.7 s each.
"""

from __future__ import annotations

import ast
import itertools
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

MAX_STEPS: Final = 1_000_000  # nodes evaluated for one length
# nodes evaluated for every length of one module together: a file of many adversarial expressions stops at this,
# not at MAX_STEPS times their number; then its other lengths are unknown (their guess)
MAX_MODULE_STEPS: Final = 3 * MAX_STEPS
MAX_ENTRIES: Final = 500_000  # entries of one built collection (a parametrize larger than that is not planned by us)
MAX_INT: Final = 10**12  # integers beyond it are unknown (no huge powers of repeated products)

_BUILTINS: Final[dict[str, Callable[..., Any]]] = {
    "list": list,
    "tuple": tuple,
    "sorted": sorted,
    "reversed": lambda x: list(reversed(x)),
    "enumerate": lambda *a: list(enumerate(*a)),
    "zip": lambda *a: list(zip(*a, strict=False)),  # zip stops at the shortest, as Python's
    "range": range,
    "len": len,
    "set": set,
    "frozenset": frozenset,
    "dict": dict,
    "min": min,
    "max": max,
    "abs": abs,
}


def _capped(entries: Iterable[Any]) -> list[Any]:
    """The entries of a lazy iterator, unknown past ``MAX_ENTRIES`` (never built whole first)."""
    out = list(itertools.islice(entries, MAX_ENTRIES + 1))
    return _sized(out)  # type: ignore[no-any-return]


_ITERTOOLS: Final[dict[str, Callable[..., Any]]] = {
    "product": lambda *a, **k: _capped(itertools.product(*a, **k)),
    "chain": lambda *a: _capped(itertools.chain(*a)),
    "from_iterable": lambda a: _capped(itertools.chain.from_iterable(a)),
    "combinations": lambda *a: _capped(itertools.combinations(*a)),
    "combinations_with_replacement": lambda *a: _capped(itertools.combinations_with_replacement(*a)),
    "permutations": lambda *a: _capped(itertools.permutations(*a)),
}
_BINARY: Final[dict[type[ast.operator], Callable[[Any, Any], Any]]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
# Python's comparison operators, by their ast node (plan.interpreter_facts decides its conditions with them too)
COMPARISONS: Final[dict[type[ast.cmpop], Callable[[Any, Any], Any]]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


class Unknown(Exception):
    """The expression's value cannot be known from the text."""


class Opaque:
    """A value the text does not give (a call of the user's code, an attribute): an entry, nothing more."""


def _concrete(value: Any, depth: int = 0) -> Any:
    """``value`` if no opaque value hides in it (it may then be compared, hashed, sorted), else Unknown."""
    if isinstance(value, Opaque) or depth > 20:
        raise Unknown
    if isinstance(value, list | tuple | set | frozenset):
        for entry in value:
            _concrete(entry, depth + 1)
    elif isinstance(value, dict):
        for key, entry in value.items():
            _concrete(key, depth + 1)
            _concrete(entry, depth + 1)
    return value


def _sized(value: Any) -> Any:
    if isinstance(value, list | tuple | set | frozenset | dict | str | range) and len(value) > MAX_ENTRIES:
        raise Unknown
    if isinstance(value, int) and abs(value) > MAX_INT:
        raise Unknown
    return value


def module_bindings(body: Sequence[ast.stmt]) -> tuple[dict[str, ast.expr], dict[str, str]]:
    """Names the module binds exactly once at its top level (``NAME = expr``), and the
    ``itertools`` functions it imports by name (``from itertools import product as p`` → p: product)."""
    bound: dict[str, list[ast.expr]] = {}
    imported: dict[str, str] = {}
    for node in body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            bound.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):  # rebound some other way: not known
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        bound.setdefault(name.id, []).extend([name, name])
        elif isinstance(node, ast.ImportFrom) and node.module == "itertools":
            imported.update({a.asname or a.name: a.name for a in node.names if a.name in _ITERTOOLS})
    return {name: values[0] for name, values in bound.items() if len(values) == 1}, imported


# a name the module imports from another module of the suite: that module's values and the name there, or (None
# for the name) the module itself, bound by ``from . import module`` (its attributes are its names)
Foreign = Callable[[str], "tuple[Values, str | None] | None"]


def no_foreign(_name: str) -> None:
    return None


class Values:
    """Lengths of expressions of one module (``body``: its top-level statements); ``foreign``: what it imports
    from the suite's other modules."""

    def __init__(self, body: Sequence[ast.stmt], foreign: Foreign = no_foreign) -> None:
        self.bindings, self.itertools = module_bindings(body)
        self.foreign = foreign
        self.cache: dict[str, Any] = {}
        self.steps = 0
        self.spent = 0  # every length's steps, MAX_MODULE_STEPS at most

    def length(self, node: ast.expr) -> int | None:
        """How many entries ``node`` yields, or None when the text does not tell (or the module's work is spent)."""
        self.spent += self.steps
        self.steps = 0
        try:
            value = self.value(node, {})
            # a dict too: parametrize iterates its argument values, and a dict yields its keys
            return len(value) if isinstance(value, list | tuple | set | frozenset | range | str | dict) else None
        except (Unknown, TypeError, ValueError, IndexError, KeyError, ZeroDivisionError, OverflowError, RecursionError):
            return None

    def value(self, node: ast.expr, local: Mapping[str, Any]) -> Any:
        self.steps += 1
        if self.steps > MAX_STEPS or self.spent + self.steps > MAX_MODULE_STEPS:
            raise Unknown
        handler = getattr(self, f"_{type(node).__name__}", None)
        return _sized(handler(node, local)) if handler is not None else Opaque()

    def _Constant(self, node: ast.Constant, _local: Mapping[str, Any]) -> Any:
        return node.value

    def _entries(self, elts: Sequence[ast.expr], local: Mapping[str, Any]) -> list[Any]:
        out: list[Any] = []
        for elt in elts:
            if isinstance(elt, ast.Starred):
                out.extend(self._iterable(self.value(elt.value, local)))
            else:
                out.append(self.value(elt, local))
            _sized(out)
        return out

    def _List(self, node: ast.List, local: Mapping[str, Any]) -> Any:
        return self._entries(node.elts, local)

    def _Tuple(self, node: ast.Tuple, local: Mapping[str, Any]) -> Any:
        return tuple(self._entries(node.elts, local))

    def _Set(self, node: ast.Set, local: Mapping[str, Any]) -> Any:
        return set(_concrete(self._entries(node.elts, local)))

    def _Dict(self, node: ast.Dict, local: Mapping[str, Any]) -> Any:
        if any(k is None for k in node.keys):
            raise Unknown  # ``**other``
        keys = [_concrete(self.value(k, local)) for k in node.keys if k is not None]
        return dict(zip(keys, (self.value(v, local) for v in node.values), strict=True))

    def _Name(self, node: ast.Name, local: Mapping[str, Any]) -> Any:
        if node.id in local:
            return local[node.id]
        if node.id in self.cache:
            return self.cache[node.id]
        bound = self.bindings.get(node.id)
        if bound is None:
            return self._imported(node.id, None)
        self.cache[node.id] = Opaque()  # a name defined through itself stays opaque
        self.cache[node.id] = self.value(bound, {})
        return self.cache[node.id]

    def _imported(self, name: str, attribute: str | None) -> Any:
        """``name`` (or ``name.attribute`` of a module it binds) as the suite's module that defines it computes it
        (icalendar 7.3.2: ``from . import timezone_ids``, ``params=timezone_ids.TZIDS``, a literal list of 595)."""
        found = self.foreign(name)
        if found is None:
            return Opaque()
        module, there = found
        if (there is None) == (attribute is None):  # a module used as a value, a name's attribute
            return Opaque()
        return module.named(there or attribute or "")

    def named(self, name: str) -> Any:
        """The value this module binds ``name`` to (Opaque when it binds none): its own work bound, steps apart."""
        saved, self.steps = self.steps, 0
        try:
            return self.value(ast.Name(id=name, ctx=ast.Load()), {}) if name in self.bindings else Opaque()
        finally:
            self.spent += self.steps
            self.steps = saved

    def _Attribute(self, node: ast.Attribute, local: Mapping[str, Any]) -> Any:
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id not in local and owner.id not in self.bindings:
            return self._imported(owner.id, node.attr)
        return Opaque()

    def _iterable(self, value: Any) -> Iterable[Any]:
        if isinstance(value, Opaque) or not isinstance(value, Iterable):
            raise Unknown
        return value

    def _comprehension(
        self, generators: Sequence[ast.comprehension], local: Mapping[str, Any]
    ) -> Iterable[dict[str, Any]]:
        """Every binding of the comprehension's names its ``for`` and ``if`` clauses make."""
        if not generators:
            yield dict(local)
            return
        first, rest = generators[0], generators[1:]
        if first.is_async:
            raise Unknown
        for entry in self._iterable(self.value(first.iter, local)):
            inner = dict(local)
            _bind(first.target, entry, inner)
            if all(_truth(self.value(cond, inner)) for cond in first.ifs):
                yield from self._comprehension(rest, inner)

    def _ListComp(self, node: ast.ListComp | ast.GeneratorExp, local: Mapping[str, Any]) -> Any:
        out = []
        for inner in self._comprehension(node.generators, local):
            out.append(self.value(node.elt, inner))
            _sized(out)
        return out

    _GeneratorExp = _ListComp  # a generator's entries, built as a list: the same walk

    def _SetComp(self, node: ast.SetComp, local: Mapping[str, Any]) -> Any:
        out = []
        for inner in self._comprehension(node.generators, local):
            out.append(_concrete(self.value(node.elt, inner)))
        return set(out)

    def _DictComp(self, node: ast.DictComp, local: Mapping[str, Any]) -> Any:
        out = {}
        for inner in self._comprehension(node.generators, local):
            out[_concrete(self.value(node.key, inner))] = self.value(node.value, inner)
            _sized(out)
        return out

    def _Subscript(self, node: ast.Subscript, local: Mapping[str, Any]) -> Any:
        value = self.value(node.value, local)
        if isinstance(value, Opaque):
            return Opaque()  # an entry of something unknown
        if isinstance(node.slice, ast.Slice):
            bounds = [
                self.value(b, local) if b is not None else None
                for b in (node.slice.lower, node.slice.upper, node.slice.step)
            ]
            return value[slice(*(_concrete(b) for b in bounds))]
        return value[_concrete(self.value(node.slice, local))]

    def _BinOp(self, node: ast.BinOp, local: Mapping[str, Any]) -> Any:
        op = _BINARY.get(type(node.op))
        if op is None:  # ``**`` (unbounded work), bit operations: an entry, never computed
            return Opaque()
        # joining or repeating lists never looks at their entries: only the operands must be known
        left, right = _known(self.value(node.left, local)), _known(self.value(node.right, local))
        if not isinstance(left, list | tuple) and not isinstance(right, list | tuple):
            left, right = _concrete(left), _concrete(right)
        if isinstance(node.op, ast.Mult) and isinstance(left, int) != isinstance(right, int):
            sequence, times = (right, left) if isinstance(left, int) else (left, right)
            if not isinstance(times, int) or len(sequence) * max(times, 0) > MAX_ENTRIES:
                raise Unknown
        return op(left, right)

    def _UnaryOp(self, node: ast.UnaryOp, local: Mapping[str, Any]) -> Any:
        value = _concrete(self.value(node.operand, local))
        if isinstance(node.op, ast.Not):
            return not value
        if isinstance(node.op, ast.USub):
            return -value
        raise Unknown

    def _Compare(self, node: ast.Compare, local: Mapping[str, Any]) -> Any:
        left = _concrete(self.value(node.left, local))
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            compare = COMPARISONS.get(type(op))
            if compare is None:  # ``is``: identity the text does not give
                raise Unknown
            right = _concrete(self.value(comparator, local))
            if not compare(left, right):
                return False
            left = right
        return True

    def _BoolOp(self, node: ast.BoolOp, local: Mapping[str, Any]) -> Any:
        want = isinstance(node.op, ast.Or)
        value: Any = None
        for entry in node.values:
            value = _concrete(self.value(entry, local))
            if bool(value) is want:
                return value
        return value

    def _IfExp(self, node: ast.IfExp, local: Mapping[str, Any]) -> Any:
        return self.value(node.body if _truth(self.value(node.test, local)) else node.orelse, local)

    def _Call(self, node: ast.Call, local: Mapping[str, Any]) -> Any:
        view = self._dict_view(node, local)
        if view is not None:
            return view
        function = self._function(node.func, local)
        if function is None:
            return Opaque()  # the user's code (pytest.param, a class): one entry, never run
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Unknown
        args = [_concrete(self.value(a, local)) if function in _ORDERING else self.value(a, local) for a in node.args]
        keywords = {k.arg: _concrete(self.value(k.value, local)) for k in node.keywords if k.arg}
        if function is range and len(range(*args)) > MAX_ENTRIES:
            raise Unknown
        return function(*args, **keywords)

    def _dict_view(self, node: ast.Call, local: Mapping[str, Any]) -> list[Any] | None:
        """``d.keys()``, ``d.values()`` or ``d.items()`` of a dict the text gives, as a list (cattrs 26.2.1:
        ``parametrize("case", IDS_TO_CASE.values(), ids=IDS_TO_CASE)``); None for any other call. A method of
        anything else is never called: an opaque entry, as any call of the user's code."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in _DICT_VIEWS or node.args or node.keywords:
            return None
        owner = self.value(func.value, local)
        return list(getattr(owner, func.attr)()) if isinstance(owner, dict) else None

    def _function(self, node: ast.expr, local: Mapping[str, Any]) -> Callable[..., Any] | None:
        """A builtin or ``itertools`` function the call names (shadowed by a binding: not one)."""
        if isinstance(node, ast.Name) and node.id not in local and node.id not in self.bindings:
            if node.id in self.itertools:
                return _ITERTOOLS[self.itertools[node.id]]
            return _BUILTINS.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "itertools":
            return _ITERTOOLS.get(node.attr) if node.attr != "from_iterable" else None
        if isinstance(node, ast.Attribute) and node.attr == "from_iterable" and isinstance(node.value, ast.Attribute):
            owner = node.value  # itertools.chain.from_iterable
            if owner.attr == "chain" and isinstance(owner.value, ast.Name) and owner.value.id == "itertools":
                return _ITERTOOLS["from_iterable"]
        return None


_DICT_VIEWS: Final = frozenset({"keys", "values", "items"})
_ORDERING: Final = (sorted, set, frozenset, dict, min, max)  # they compare or hash their entries


def _known(value: Any) -> Any:
    if isinstance(value, Opaque):
        raise Unknown
    return value


def _truth(value: Any) -> bool:
    return bool(_concrete(value))


def _bind(target: ast.expr, value: Any, local: dict[str, Any]) -> None:
    """A ``for`` target's names bound to ``value`` (tuples unpacked)."""
    if isinstance(target, ast.Name):
        local[target.id] = value
    elif isinstance(target, ast.Tuple | ast.List):
        entries = list(_concrete_shape(value))
        if len(entries) != len(target.elts) or any(isinstance(e, ast.Starred) for e in target.elts):
            raise Unknown
        for inner, entry in zip(target.elts, entries, strict=True):
            _bind(inner, entry, local)
    else:
        raise Unknown


def _concrete_shape(value: Any) -> Iterable[Any]:
    if isinstance(value, Opaque | str) or not isinstance(value, Iterable):
        raise Unknown
    return value
