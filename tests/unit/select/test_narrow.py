"""Narrowing by executed code, the pure parts: hunks, function bodies (ast), the coverage map's answer and
the decision with a narrowed file (docs/selection.md, "Narrowing by executed code")."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_shards.coverage.artifact import FileCoverage
from ci_shards.select.decide import decide
from ci_shards.select.diff import ChangedFile, ChangeKind
from ci_shards.select.maps import CoverageMap, FileLines, TouchfilesMap, coverage_lines
from ci_shards.select.narrow import (
    Confined,
    FunctionBody,
    Hunk,
    Narrowing,
    NotConfined,
    changed_functions,
    files_that_ran,
    function_bodies,
    parse_hunks,
)
from ci_shards.select.settings import SelectionSettings

SOURCE = textwrap.dedent(
    '''\
    import functools


    @decorate
    def first(a, b=1):
        """Docs."""
        total = a + b
        return total


    def second(
        x,
        y=2,
    ):
        def inner(z):
            return z * 2

        return inner(x) + y


    class Box:
        size = 3

        async def value(self):
            return 7


    def one(): return 1


    @functools.lru_cache
    def cached():
        return {"k": 1}


    key = lambda v: v + 1


    def uses_lambda(items):
        return sorted(items, key=lambda v: -v)
    '''
)


def lines_of(text: str) -> dict[str, int]:
    return {line.strip(): n for n, line in enumerate(SOURCE.splitlines(), 1) if line.strip() == text}


def at(text: str) -> int:
    (line,) = lines_of(text).values()
    return line


def names(answer: Confined | NotConfined) -> list[str]:
    assert isinstance(answer, Confined), answer
    return [f.qualname for f in answer.functions]


def test_parse_hunks_reads_both_sides_and_the_lines() -> None:
    diff = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -3,2 +3,4 @@ def f():\n-a\n@@ -9 +11 @@\n@@ -20,0 +23,2 @@\n+new\n"
    expected = (Hunk(3, 2, 3, 4, removed=("a",)), Hunk(9, 1, 11, 1), Hunk(20, 0, 23, 2, added=("new",)))
    assert parse_hunks(diff) == expected


def test_function_bodies_exclude_headers_and_docstrings() -> None:
    bodies = {b.qualname: b for b in function_bodies(SOURCE)}
    assert bodies["first"].first == at("total = a + b")  # after the docstring
    assert bodies["second"].first == at("def inner(z):") and bodies["second.inner"].first == at("return z * 2")
    assert "one" not in bodies  # a one-line def has no line that runs only when called
    assert bodies["Box.value"].first == at("return 7")
    assert bodies["cached"].cached and not bodies["first"].cached


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("total = a + b", ["first"]),
        ("return inner(x) + y", ["second"]),
        ("def inner(z):", ["second"]),  # the inner def line runs when the outer function runs
        ("return z * 2", ["second.inner"]),
        ("return 7", ["Box.value"]),  # an async method
        ("return sorted(items, key=lambda v: -v)", ["uses_lambda"]),  # a lambda inside a body
    ],
)
def test_a_change_inside_a_body_is_confined_to_the_innermost_function(text: str, expected: list[str]) -> None:
    assert names(changed_functions(SOURCE, [Hunk(at(text), 1)])) == expected


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("def first(a, b=1):", "outside any function body"),  # the def line, a default argument
        ("@decorate", "outside any function body"),
        ('"""Docs."""', "outside any function body"),  # __doc__ is set at import
        ("y=2,", "outside any function body"),  # a default of a multi-line signature
        ("):", "outside any function body"),
        ("size = 3", "outside any function body"),  # a class body
        ("def one(): return 1", "outside any function body"),  # a one-line def: its line is the header's
        ("key = lambda v: v + 1", "outside any function body"),  # a module-level lambda
        ("import functools", "outside any function body"),
        ('return {"k": 1}', "`cached` is cached"),
    ],
)
def test_a_change_that_runs_at_import_or_for_every_caller_is_not_confined(text: str, why: str) -> None:
    answer = changed_functions(SOURCE, [Hunk(at(text), 1)])
    assert isinstance(answer, NotConfined) and why in answer.reason


def test_a_hunk_spanning_two_functions_is_not_confined_but_two_hunks_are() -> None:
    spanning = changed_functions(SOURCE, [Hunk(at("return total"), at("x,") - at("return total") + 1)])
    assert isinstance(spanning, NotConfined)
    two = changed_functions(SOURCE, [Hunk(at("return total"), 1), Hunk(at("return z * 2"), 1)])
    assert names(two) == ["first", "second.inner"]


def test_pure_insertions_count_where_both_neighbours_are() -> None:
    assert names(changed_functions(SOURCE, [Hunk(at("total = a + b"), 0)])) == ["first"]
    assert names(changed_functions(SOURCE, [Hunk(at('"""Docs."""'), 0)])) == ["first"]  # before the first statement
    # after a function's last line: the new line may be at module level
    assert isinstance(changed_functions(SOURCE, [Hunk(at("return total"), 0)]), NotConfined)
    assert isinstance(changed_functions(SOURCE, [Hunk(0, 0)]), NotConfined)  # at the top of the file


def test_no_hunk_or_a_file_that_does_not_parse_is_not_confined() -> None:
    assert isinstance(changed_functions(SOURCE, []), NotConfined)
    answer = changed_functions("def f(:\n    pass\n", [Hunk(2, 1)])
    assert isinstance(answer, NotConfined) and "does not parse" in answer.reason


HEADER_WORDS = ("def ", "@", "class ", "):", '"""')


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=5), st.data())
def test_a_confined_hunk_never_touches_a_header_line(sizes: list[int], data: st.DataObject) -> None:
    """Generated modules of functions (with decorators, docstrings, module code between): whatever hunk is
    drawn, a Confined answer means every changed line is a body line of the answered functions."""
    parts = []
    for index, size in enumerate(sizes):
        body = "".join(f"    v{n} = {n}\n" for n in range(size)) or "    pass\n"
        parts.append(f'X{index} = {index}\n\n@dec\ndef f{index}(a=1):\n    """doc"""\n{body}\n')
    source = "".join(parts)
    lines = source.splitlines()
    start = data.draw(st.integers(min_value=0, max_value=len(lines)))
    count = data.draw(st.integers(min_value=0, max_value=3))
    answer = changed_functions(source, [Hunk(start, count)])
    if isinstance(answer, Confined):
        body_lines = {n for f in answer.functions for n in f.lines}
        touched = range(start, start + count) if count else (start + 1,)
        assert all(n in body_lines for n in touched)
        assert not any(lines[n - 1].lstrip().startswith(HEADER_WORDS) for n in touched if n <= len(lines))
        assert not any(lines[n - 1].startswith("X") for n in touched if n <= len(lines))


def test_tests_that_ran_any_line_of_the_functions() -> None:
    body = FunctionBody(qualname="f", line=3, header=4, first=5, last=7)
    assert files_that_ran([body], {"t/a.py": [1, 6], "t/b.py": [8], "t/c.py": []}) == frozenset({"t/a.py"})


def coverage_map(**overrides: object) -> CoverageMap:
    values: dict[str, object] = {
        "executed_by": {"pkg/m.py": ("s1", frozenset({"t/a.py", "t/b.py"}))},
        "unmeasured": {},
        "base_sha256": {"pkg/m.py": "s1"},
        "lines": {"pkg/m.py": FileLines({"t/a.py": frozenset({6}), "t/b.py": frozenset({9})}, frozenset({1, 4}))},
    }
    values.update(overrides)
    return CoverageMap(**values)  # type: ignore[arg-type]


CONFINED = Confined((FunctionBody(qualname="f", line=3, header=4, first=5, last=7),))


def test_the_map_narrows_to_the_test_files_that_ran_the_body() -> None:
    answer = coverage_map().narrow("pkg/m.py", CONFINED)
    assert answer == Narrowing(
        functions="`pkg.m.f`", tests=frozenset({"t/a.py"}), measured=frozenset({"t/a.py", "t/b.py"})
    )


@pytest.mark.parametrize(
    ("overrides", "why"),
    [
        ({"base_sha256": {"pkg/m.py": "other"}}, "no fresh entry"),  # stale
        ({"base_sha256": {}}, "no fresh entry"),
        ({"lines": {"pkg/m.py": FileLines({"t/a.py": frozenset({6})}, None)}}, "does not record the lines run"),
        ({"lines": {"pkg/m.py": FileLines({"t/a.py": frozenset({6})}, frozenset({6}))}}, "ran outside any test"),
    ],
    ids=["stale", "not-at-base", "old-artifact", "ran-outside-tests"],
)
def test_the_map_does_not_narrow_when_it_cannot_vouch(overrides: dict[str, object], why: str) -> None:
    answer = coverage_map(**overrides).narrow("pkg/m.py", CONFINED)
    assert isinstance(answer, str) and why in answer


def test_coverage_lines_reads_the_per_test_lines_and_the_unattributed_ones() -> None:
    data = {
        "files": {
            "a.py": {"test_files": {"t/a.py": [2, 3]}, "unattributed_lines": [1]},
            "b.py": {"test_files": {"t/b.py": [2]}},
            "c.py": {"test_files": "garbage"},
        }
    }
    found = coverage_lines(data)
    assert found["a.py"] == FileLines({"t/a.py": frozenset({2, 3})}, frozenset({1}))
    assert found["b.py"].unattributed is None and "c.py" not in found


class ImportMap:
    name = "import"

    def tests_for(self, path: str) -> frozenset[str] | None:
        return frozenset({"t/a.py", "t/b.py", "t/new.py", "t/tf.py"}) if path.startswith("pkg/") else None


ITEMS = ["t/a.py", "t/b.py", "t/new.py", "t/tf.py"]
NARROWED = {"pkg/m.py": Narrowing(functions="`pkg.m.f`", tests=frozenset({"t/a.py"}), measured=frozenset(ITEMS[:2]))}


def test_decide_keeps_what_ran_the_body_what_the_map_does_not_know_and_touchfiles() -> None:
    touchfiles = TouchfilesMap(rules={"t/tf.py": ("pkg/m.py",)}, test_files=frozenset(ITEMS))
    chosen = decide(
        ITEMS,
        item_paths={i: i for i in ITEMS},
        changed=[ChangedFile(ChangeKind.MODIFIED, "pkg/m.py")],
        maps=[ImportMap(), touchfiles],
        settings=SelectionSettings(),
        narrowing=NARROWED,
    )
    assert chosen.selected == ("t/a.py", "t/new.py", "t/tf.py")
    assert chosen.skipped == {"t/b.py": "coverage: did not execute `pkg.m.f` on base"}
    assert "coverage narrowed pkg/m.py to 3 of 4 test files (the changed code is inside `pkg.m.f`)" in chosen.lines


def test_decide_narrows_only_a_modified_file() -> None:
    chosen = decide(
        ITEMS,
        item_paths={i: i for i in ITEMS},
        changed=[ChangedFile(ChangeKind.RENAMED, "pkg/m.py", old_path="pkg/old.py")],
        maps=[ImportMap()],
        settings=SelectionSettings(),
        narrowing=NARROWED,
    )
    assert chosen.selected == tuple(ITEMS)


def test_the_artifact_keeps_unattributed_lines_and_reads_files_without_them() -> None:
    entry = {"sha256": "s", "executed_lines": [1, 2], "missed_lines": [], "test_files": {"t/a.py": [2]}}
    old = FileCoverage.from_json("a.py", entry)
    assert old.unattributed is None and "unattributed_lines" not in old.to_json()
    new = FileCoverage.from_json("a.py", {**entry, "unattributed_lines": [1]})
    assert new.unattributed == (1,) and new.to_json()["unattributed_lines"] == [1]
