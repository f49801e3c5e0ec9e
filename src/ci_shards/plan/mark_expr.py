"""pytest's ``-m`` and ``-k`` expressions, evaluated where a file's text can decide them. Pure.

The grammar is pytest's own (``_pytest/mark/expression.py``, which ci-shards cannot import: the plan
job need not have pytest)::

    expression: expr? EOF
    expr:       and_expr ('or' and_expr)*
    and_expr:   not_expr ('and' not_expr)*
    not_expr:   'not' not_expr | '(' expr ')' | ident kwargs?
    ident:      (\\w|:|\\+|-|\\.|\\[|\\]|\\\\|/)+
    kwargs:     ('(' name '=' value ( ', ' name '=' value )*  ')')

Evaluation is three-valued (Kleene's logic): an identifier the caller cannot decide is ``None``,
``not None`` is ``None``, ``False and None`` is ``False``, ``True or None`` is ``True``. A test whose
expression comes out ``None`` is counted as selected, as without the expression. An identifier with
keyword arguments (``-m "mark(n=1)"``) is undecided. An expression pytest would refuse (a syntax
error) decides nothing: pytest says what is wrong when the shard runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

_TOKEN: Final = re.compile(r"\s*(\(|\)|,|=|(?:\w|:|\+|-|\.|\[|\]|\\|/)+|\"[^\"]*\"|'[^']*')")
_KEYWORDS: Final = frozenset({"and", "or", "not"})

# an identifier → True, False, or None (undecided)
Decide = Callable[[str], "bool | None"]


class ExpressionError(ValueError):
    """Not an expression pytest accepts."""


@dataclass(frozen=True)
class _Ident:
    name: str
    with_arguments: bool


Node = tuple[str, "list[Node]"] | _Ident  # ("and"|"or"|"not"|"true", operands) or an identifier


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None:
            msg = f"unexpected character at column {position + 1} of {text!r}"
            raise ExpressionError(msg)
        tokens.append(match.group(1))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            msg = f"expected {expected or 'more'} in the expression"
            raise ExpressionError(msg)
        self.at += 1
        return token

    def expression(self) -> Node:
        if self.peek() is None:
            return ("true", [])  # an empty expression selects everything, as in pytest
        node = self.expr()
        if self.peek() is not None:
            msg = f"unexpected {self.peek()!r} in the expression"
            raise ExpressionError(msg)
        return node

    def expr(self) -> Node:
        operands = [self.and_expr()]
        while self.peek() == "or":
            self.take()
            operands.append(self.and_expr())
        return operands[0] if len(operands) == 1 else ("or", operands)

    def and_expr(self) -> Node:
        operands = [self.not_expr()]
        while self.peek() == "and":
            self.take()
            operands.append(self.not_expr())
        return operands[0] if len(operands) == 1 else ("and", operands)

    def not_expr(self) -> Node:
        token = self.take()
        if token == "not":
            return ("not", [self.not_expr()])
        if token == "(":
            node = self.expr()
            self.take(")")
            return node
        if token in _KEYWORDS or token in (")", ",", "="):
            msg = f"unexpected {token!r} in the expression"
            raise ExpressionError(msg)
        with_arguments = self.peek() == "("
        if with_arguments:  # mark(name=value, ...): skipped over, the test is undecided
            while self.take() != ")":
                pass
        return _Ident(token, with_arguments)


def parse(text: str) -> Node:
    """The expression's tree (``ExpressionError`` for what pytest would refuse)."""
    return _Parser(text).expression()


def evaluate(node: Node, decide: Decide) -> bool | None:
    """True or False when ``decide`` settles it, None when it depends on undecided identifiers."""
    if isinstance(node, _Ident):
        return None if node.with_arguments else decide(node.name)
    kind, operands = node
    if kind == "true":
        return True
    values = [evaluate(o, decide) for o in operands]
    if kind == "not":
        return None if values[0] is None else not values[0]
    if kind == "and":
        return False if False in values else (None if None in values else True)
    return True if True in values else (None if None in values else False)
