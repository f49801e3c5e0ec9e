"""Narrowing by executed code for real changes: insertions and deletions inside function bodies, checked
against the new version (``confine``: docs/selection.md, "Narrowing by executed code"). Each change is a
base and a new text, its hunks from difflib's zero-context unified diff (the same headers as ``git diff -U0``)."""

from __future__ import annotations

import difflib
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.select.narrow import Confined, NotConfined, confine, function_bodies, parse_hunks

BASE = textwrap.dedent(
    '''\
    import functools


    @functools.wraps(print)
    def documented(a, b=1):
        """Docs."""

        total = a + b
        more = total * 2
        return more


    def commented(x):
        # why the body starts here
        return x + 1


    def signature(
        x,
        y=2,  # a comment
    ) -> int:
        return x + y


    class Box:
        size = 3

        def first(self):
            return 1

        def second(self):
            value = 2
            return value


    def outer(n):
        def inner(m):
            doubled = m * 2
            return doubled

        return inner(n) + 1


    def plain(x):
        a = x
        b = a
        return b
    '''
)


def diff_of(base: str, head: str) -> str:
    return "".join(difflib.unified_diff(base.splitlines(True), head.splitlines(True), "a/m.py", "b/m.py", n=0))


def insert(after: str, text: str, source: str = BASE) -> str:
    """``source`` with ``text`` (dedented, re-indented to ``indent``) inserted after the unique line ``after``."""
    lines = source.splitlines(True)
    (index,) = [n for n, line in enumerate(lines) if line.strip() == after]
    return "".join([*lines[: index + 1], text, *lines[index + 1 :]])


def delete(line: str, source: str = BASE) -> str:
    lines = source.splitlines(True)
    (index,) = [n for n, text in enumerate(lines) if text.strip() == line]
    return "".join(lines[:index] + lines[index + 1 :])


def confined(head: str, base: str = BASE) -> list[str]:
    answer = confine(base, head, diff_of(base, head))
    assert isinstance(answer, Confined), answer
    return [f.qualname for f in answer.functions]


def reason(head: str, base: str = BASE) -> str:
    answer = confine(base, head, diff_of(base, head))
    assert isinstance(answer, NotConfined), answer
    return answer.reason


@pytest.mark.parametrize(
    ("after", "text", "expected"),
    [
        ('"""Docs."""', "    print('first')\n", "documented"),  # after the docstring, before its blank line
        ("", "    print('first')\n", None),  # (see below: after the blank line is the same function)
        ("def commented(x):", "    print('first')\n", "commented"),  # before a comment that opens the body
        ("# why the body starts here", "    print('first')\n", "commented"),
        (") -> int:", "    print('first')\n", "signature"),  # after a multi-line signature's last line
        ("more = total * 2", "    print('middle')\n", "documented"),  # between two statements
        ("b = a", "    print('before the last')\n", "plain"),  # before the last statement
        ("def second(self):", "        print('first')\n", "Box.second"),  # a method's first statement
        ("def inner(m):", "        print('first')\n", "outer.inner"),  # inside a nested function
        ("return doubled", "        print('still inner')\n", "outer"),  # after inner's last line: inside outer
        ("return doubled", "    print('outer')\n", "outer"),
    ],
)
def test_an_insertion_inside_a_body_narrows_to_its_function(after: str, text: str, expected: str | None) -> None:
    if expected is None:
        head = BASE.replace('"""Docs."""\n\n', '"""Docs."""\n\n    print(\'first\')\n')
        expected = "documented"
    else:
        head = insert(after, text)
    assert confined(head) == [expected]


@pytest.mark.parametrize(
    ("head", "why"),
    [
        (insert("return more", "    print('last')\n"), "after line"),  # after the last line: may be module level
        (insert("return 1", "\n    def between(self):\n        return 0\n"), "outside any function body"),
        (insert("return 1", "    print('between two methods')\n"), "outside any function body"),
        (insert("size = 3", "    count = 4\n"), "outside any function body"),  # a class body
        (insert("import functools", "import os\n"), "outside any function body"),
        (insert("@functools.wraps(print)", "@functools.wraps(len)\n"), "outside any function body"),  # a decorator
        (BASE.replace("@functools.wraps(print)", "@functools.wraps(len)"), "outside any function body"),
        (BASE.replace("def plain(x):", "def plain(x, y=0):"), "outside any function body"),  # a default
        (BASE.replace("def plain(x):", "def simple(x):"), "outside any function body"),  # a rename
        (insert("def documented(a, b=1):", "    print('before the docstring')\n"), "outside any function body"),
        (insert("return b", "\n\ndef added():\n    return 0\n"), "outside any function body"),  # a new function
    ],
)
def test_an_insertion_outside_a_body_falls_back(head: str, why: str) -> None:
    assert why in reason(head)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("total = a + b", "documented"),  # the first statement after a docstring
        ("more = total * 2", "documented"),
        ("return b", "plain"),  # the last statement
        ("a = x", "plain"),
        ("value = 2", "Box.second"),
        ("doubled = m * 2", "outer.inner"),
        ("# why the body starts here", "commented"),
    ],
)
def test_deleting_a_whole_statement_inside_a_body_narrows(line: str, expected: str) -> None:
    assert confined(delete(line)) == [expected]


def test_deleting_a_docstring_a_function_or_a_body_falls_back() -> None:
    assert "outside any function body" in reason(delete('"""Docs."""'))
    whole = BASE.replace("def commented(x):\n    # why the body starts here\n    return x + 1\n\n\n", "")
    assert "outside any function body" in reason(whole)
    assert "does not compile" in reason(delete("return x + 1"))  # the body left empty


def test_a_move_between_functions_falls_back() -> None:
    moved = insert("def second(self):", "        return 1\n", delete("return 1")).replace(
        "    def first(self):\n\n", "    def first(self):\n        pass\n\n"
    )
    assert "moves from `Box.first` to `Box.second`" in reason(moved)
    two = insert("def commented(x):", "    print('one')\n", insert("b = a", "    print('two')\n"))
    assert confined(two) == ["commented", "plain"]  # two insertions in two functions: both narrow


@pytest.mark.parametrize(
    ("head", "why"),
    [
        # a string as a body's new first statement is its docstring: __doc__ changes at import
        (insert("def plain(x):", "    'now a docstring'\n"), "not the base's module"),
        # a yield makes a generator: a call no longer runs the body at all
        (insert("a = x", "    yield a\n"), "not the base's module"),
        # a string opened in one body and closed in another swallows the code between them
        (insert("b = a", '    """\n', insert("# why the body starts here", '    """\n')), "not the base's module"),
        (insert("a = x", "    await a\n"), "does not compile"),
        (insert("a = x", "    nonlocal a\n"), "does not compile"),
        (insert("a = x", "    pattern = '\\d'\n"), "a new warning"),
    ],
)
def test_a_body_change_that_reshapes_the_module_falls_back(head: str, why: str) -> None:
    assert why in reason(head)


def test_an_existing_warning_does_not_stop_narrowing() -> None:
    base = "def f():\n    pattern = '\\d'\n    return pattern\n"
    assert confined(insert("pattern = '\\d'", "    x = 1\n", base), base) == ["f"]


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_a_confined_change_only_touches_the_changed_bodies_at_head(data: st.DataObject) -> None:
    """Random insertions and deletions of one line, at any indentation: whenever ``confine`` narrows, every
    new line lies inside the body of a function of the same name at the new version, and the bodies of
    every other function are the same text."""
    lines = BASE.splitlines(True)
    where = data.draw(st.integers(min_value=0, max_value=len(lines)))
    if data.draw(st.booleans()) and where < len(lines):
        head = "".join(lines[:where] + lines[where + 1 :])
    else:
        indent = " " * data.draw(st.sampled_from([0, 4, 8, 12]))
        text = data.draw(st.sampled_from(["x = 1", "return 0", "def g():", "'text'", "yield 1", "pass", "# note"]))
        head = "".join([*lines[:where], f"{indent}{text}\n", *lines[where:]])
    diff = diff_of(BASE, head)
    answer = confine(BASE, head, diff)
    if not isinstance(answer, Confined):
        return
    names = {f.qualname for f in answer.functions}
    new = {b.qualname: b for b in function_bodies(head)}
    for hunk in parse_hunks(diff):
        for line in range(hunk.new_start, hunk.new_start + hunk.new_count):
            assert any(new[n].header < line <= new[n].last for n in names if n in new), (line, names)
    old = {b.qualname: b for b in function_bodies(BASE)}
    base_lines, head_lines = BASE.splitlines(), head.splitlines()
    for name, body in old.items():
        if not any(name == n or name.startswith(f"{n}.") or n.startswith(f"{name}.") for n in names):
            assert name in new
            assert base_lines[body.first - 1 : body.last] == head_lines[new[name].first - 1 : new[name].last]


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(st.data())
def test_a_confined_change_only_touches_the_changed_bodies_at_head_thorough(data: st.DataObject) -> None:
    test_a_confined_change_only_touches_the_changed_bodies_at_head.hypothesis.inner_test(data)  # type: ignore[attr-defined]
