"""The tests a file defines, counted from its text as pytest would collect them (no import)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ci_shards.plan.static_count import (
    DESELECTED_TESTS,
    EXAMPLE_TESTS,
    GUESSED_CASES,
    HYPOTHESIS_EXAMPLES,
    CountRules,
    FileCount,
    Fixture,
    count_tests,
    fixtures_in,
    literal_suffixes,
    weighted_tests,
)


def _count(source: str, rules: CountRules | None = None, fixtures: dict[str, Fixture] | None = None) -> FileCount:
    return count_tests(textwrap.dedent(source), rules or CountRules(), fixtures)


def test_functions_and_methods_by_pytest_default_names():
    counted = _count(
        """
        import pytest

        def test_a(): pass
        async def test_b(): pass
        def helper(): pass
        @pytest.fixture
        def test_data(): return 1       # a fixture is not a test
        def test_a(): pass              # redefined: one test, as in the module's namespace

        class TestThing:
            def test_x(self): pass
            @staticmethod
            def test_static(): pass
            @property
            def test_prop(self): return 1   # not callable: not collected
            def setup_method(self): pass

        class Helper:                       # not a test class name
            def test_y(self): pass
        """
    )
    assert counted == FileCount(tests=4)


def test_parametrize_over_literals_multiplies_and_stacks():
    counted = _count(
        """
        import pytest
        from pytest import mark

        @pytest.mark.parametrize("x", [1, 2, 3])
        def test_one(x): pass

        @pytest.mark.parametrize(("a", "b"), [(1, 2), pytest.param(3, 4, marks=pytest.mark.skip), (5, 6)])
        @mark.parametrize("c", (True, False))
        def test_stacked(a, b, c): pass

        @pytest.mark.parametrize("x", argvalues={"a", "b"})
        def test_keyword(x): pass

        @pytest.mark.parametrize("x", [])
        def test_empty(x): pass          # pytest collects one test and skips it
        """
    )
    assert counted == FileCount(tests=3 + 3 * 2 + 2 + 1)


def test_parametrize_over_names_literal_ones_resolved_others_guessed():
    counted = _count(
        """
        import pytest
        from elsewhere import IMPORTED

        CASES = [1, 2, 3, 4, 5]
        TWICE = [1]
        TWICE = [1, 2]                   # bound twice: not trusted
        with_ids = pytest.mark.parametrize("x", [1, 2])

        @pytest.mark.parametrize("x", CASES)
        def test_named(x): pass

        @pytest.mark.parametrize("x", IMPORTED)
        def test_imported(x): pass

        @pytest.mark.parametrize("x", range(10_000))
        def test_range(x): pass          # pytest collects them all, whatever -m deselects later

        @pytest.mark.parametrize("x", range(2, 12, 5))
        def test_range_step(x): pass

        @pytest.mark.parametrize("x", range(N))
        def test_range_of_a_name(x): pass

        @pytest.mark.parametrize("x", range(100000000000000000000))
        def test_range_too_long(x): pass

        @pytest.mark.parametrize("x", TWICE)
        def test_twice(x): pass

        @pytest.mark.parametrize("x", [*CASES, 6])
        def test_starred(x): pass        # built from a known name: computed (static_values), 6

        @with_ids
        def test_mark_by_name(x): pass
        """
    )
    assert counted == FileCount(tests=5 + 10_000 + 2 + 4 * GUESSED_CASES + 6 + 2, guessed=4)


def test_a_dicts_views_and_the_dict_itself_count_its_entries():
    # cattrs 26.2.1: ``parametrize("struct_unstruct", IDS.values(), ids=IDS)`` over a 12-entry dict, counted 4
    counted = _count(
        """
        import pytest
        from elsewhere import Parent, Child

        CASES = {"parent": (Parent(1), {"p": 1}), "child": (Child(1, 2), {"p": 1, "c": 2}), "none": None}

        @pytest.mark.parametrize("case", CASES.values(), ids=CASES)
        def test_values(case): pass

        @pytest.mark.parametrize(("name", "case"), CASES.items())
        def test_items(name, case): pass

        @pytest.mark.parametrize("name", CASES)  # a dict yields its keys
        def test_keys(name): pass

        @pytest.fixture(params=list(CASES.keys()))
        def named(request): return request.param

        def test_fixture(named): pass
        """
    )
    assert counted == FileCount(tests=4 * 3)


def test_class_and_module_marks_multiply_every_test_under_them():
    counted = _count(
        """
        import pytest
        pytestmark = [pytest.mark.slow, pytest.mark.parametrize("backend", ["a", "b"])]

        def test_module_level(backend): pass

        @pytest.mark.parametrize("n", [1, 2, 3])
        class TestMarked:
            pytestmark = pytest.mark.parametrize("m", [1, 2])
            def test_x(self, backend, n, m): pass
        """
    )
    assert counted == FileCount(tests=2 + 2 * 3 * 2)


def test_nested_classes_and_inherited_methods():
    counted = _count(
        """
        import pytest

        class Base:                          # not collected itself, its tests are inherited
            def test_base(self): pass

        class TestOuter(Base):
            def test_outer(self): pass

            @pytest.mark.parametrize("p", [1, 2])
            class TestInner:
                def test_inner(self, p): pass

                class TestDeeper:
                    def test_deep(self, p): pass

                class NotATest:
                    def test_hidden(self): pass

        class TestChild(TestOuter):          # collects TestOuter's tests again, and its nested class
            def test_outer(self): pass       # overrides: still one
            def test_child(self): pass
        """
    )
    # TestOuter: base, outer, 2 inner, 2 deep = 6; TestChild: the same 6 + child
    assert counted == FileCount(tests=6 + 7)


def test_classes_pytest_does_not_collect():
    counted = _count(
        """
        class TestWithInit:
            def __init__(self): pass
            def test_x(self): pass

        class TestDisabled:
            __test__ = False
            def test_x(self): pass

        class TestInheritsDisabled(TestDisabled):
            def test_y(self): pass

        class TestEnabledAgain(TestDisabled):
            __test__ = True
            def test_z(self): pass
        """
    )
    assert counted == FileCount(tests=2)  # TestEnabledAgain: test_x and test_z


@pytest.mark.parametrize(
    ("source", "parts"),
    [
        pytest.param(  # the base is the TestA bound when the class statement runs: the one above it
            """
            class TestA:
                def test_a(self): pass

            class TestA(TestA):
                def test_aa(self): pass
            """,
            ["TestA::test_a", "TestA::test_aa"],
            id="redefined-from-itself",
        ),
        pytest.param(  # ... and so is its __test__ = False
            """
            class TestA:
                __test__ = False
                def test_a(self): pass

            class TestA(TestA):
                def test_a(self): pass
            """,
            [],
            id="inherits-test-false-from-itself",
        ),
        pytest.param(  # TestC inherits the first TestB, whatever the name holds at the end
            """
            class TestB:
                def test_b(self): pass

            class TestC(TestB):
                pass

            class TestB:
                def test_x(self): pass
            """,
            ["TestB::test_x", "TestC::test_b"],
            id="base-rebound-below",
        ),
    ],
)
def test_a_base_is_the_class_its_name_holds_where_the_subclass_is_defined(source: str, parts: list[str]):
    # found by tests/e2e/plan/test_cut_parts.py's property test against pytest's own collection
    counted = _count(source)
    assert sorted(key for key, _, _ in counted.parts) == parts
    assert counted.tests == len(parts)


def test_unittest_classes_whatever_their_name():
    counted = _count(
        """
        import unittest
        import pytest

        class MyCase(unittest.TestCase):
            def __init__(self, *a): super().__init__(*a)
            def test_a(self): pass
            def testB(self): pass               # unittest's prefix is "test", not python_functions
            @pytest.mark.parametrize("x", [1, 2])   # not supported on unittest methods
            def test_c(self, x): pass
            def helper(self): pass

        class Derived(MyCase):
            def test_d(self): pass
        """
    )
    assert counted == FileCount(tests=3 + 4)


def test_the_projects_python_functions_and_python_classes():
    source = """
        def check_a(): pass
        def test_b(): pass
        class DescribeThing:
            def it_works(self): pass
            def check_c(self): pass
        """
    rules = CountRules(functions=("check_", "it_*"), classes=("Describe*",))
    assert _count(source, rules) == FileCount(tests=3)
    assert _count(source) == FileCount(tests=1)


def test_files_with_no_tests_and_conditional_definitions():
    assert _count("") == FileCount(tests=0)
    assert _count('"""Helpers only."""\nimport os\n\ndef make(): return os.sep\n') == FileCount(tests=0)
    counted = _count(
        """
        import sys
        if sys.version_info >= (3, 11):
            def test_new(): pass
        else:
            def test_new(): pass
        try:
            import numpy
        except ImportError:
            pass
        else:
            def test_numpy(): pass       # counted: whether numpy is there is known only when it runs
        """
    )
    assert counted == FileCount(tests=2)


@pytest.mark.parametrize(
    ("source", "error"),
    [
        (b"def test_a(:\n    pass\n", SyntaxError),
        # not UTF-8: Python's own decoding fails (3.10 meets the null byte first: ValueError)
        (b"\xff\xfe\x00def test_a(): pass\n", (SyntaxError, ValueError)),
        (b"# -*- coding: klingon -*-\ndef test_a(): pass\n", SyntaxError),
        (b"def test_a(): pass\x00\n", (SyntaxError, ValueError)),  # null bytes
    ],
)
def test_what_is_not_python_raises_for_the_caller(source, error):
    with pytest.raises(error):
        count_tests(source)


def test_bytes_follow_the_encoding_declaration():
    source = "# -*- coding: latin-1 -*-\ndef test_é(): pass\n".encode("latin-1")
    assert count_tests(source) == FileCount(tests=1)


def test_parametrized_fixtures_multiply_the_tests_that_ask_for_them():
    conftest = fixtures_in(
        textwrap.dedent(
            """
            import pytest

            @pytest.fixture(name="slots", params=(True, False))
            def _slots(request):
                return request.param

            @pytest.fixture(params=["sqlite", "postgres", "mysql"])
            def db(request): return request.param
            """
        )
    )
    assert conftest == {"slots": Fixture(2, ("request",)), "db": Fixture(3, ("request",))}
    counted = _count(
        """
        import pytest
        from hypothesis import given, strategies as st

        @pytest.fixture(params=[1, 2])
        def size(request): return request.param

        @pytest.fixture
        def table(db, size): return (db, size)     # asks for two parametrized fixtures: 3 x 2

        def test_direct(slots): pass                 # 2
        def test_through_fixtures(table): pass       # 6
        def test_both(table, slots): pass            # 12
        def test_default(slots=True): pass           # an argument with a default is no fixture: 1

        @pytest.mark.parametrize("slots", [True])
        def test_overridden(slots): pass             # the parametrize wins: 1

        @given(slots=st.booleans())
        def test_given_by_name(slots): pass          # hypothesis fills it: 1

        @given(st.booleans())
        def test_given_positional(db, slots): pass   # the strategy fills the last one: db only

        class TestMethods:
            def test_method(self, slots): pass       # self is no fixture: 2

        @pytest.fixture(params=[1, 2, 3, 4, 5])
        def db(request): return request.param      # the file's own fixture wins over the conftest's
        def test_own(db): pass                       # 5
        """,
        fixtures=conftest,
    )
    # the file's db (5 cases) also counts for test_through_fixtures, test_both and test_given_positional (47,
    # as pytest collects this file beside that conftest.py)
    given = 1 + 5  # the @given tests' cases, each also runs its examples
    assert counted == FileCount(
        tests=2 + 10 + 20 + 1 + 1 + 1 + 5 + 2 + 5,
        hypothesis=given,
        extra_units=given * (HYPOTHESIS_EXAMPLES * EXAMPLE_TESTS - 1),
    )


def test_a_parametrized_fixture_of_a_class_multiplies_the_tests_of_that_class():
    # structlog 26.1.0's TestLoggers: ``@pytest.fixture(name="logger_cls", params=(WriteLogger, PrintLogger))`` on a
    # staticmethod of the class doubles its 12 tests; pytest sees a class's fixtures in it, its nested classes
    # and its subclasses, nowhere else
    counted = _count(
        """
        import pytest

        @pytest.fixture(params=[1, 2, 3])
        def db(request): return request.param

        class TestLoggers:
            @pytest.fixture(name="logger_cls", params=("write", "print"))
            @staticmethod
            def _logger_cls(request): return request.param

            @pytest.fixture(params=[1, 2, 3, 4, 5])
            def db(self, request): return request.param    # the class's own wins over the module's in it

            def test_a(self, logger_cls): pass                # 2
            def test_b(self, logger_cls, db): pass            # 10

            class TestNested:
                def test_c(self, logger_cls): pass            # 2

        class TestSub(TestLoggers):
            def test_d(self, logger_cls): pass                # inherited fixture: 2, and test_a 2, test_b 10, nested 2

        class TestOther:
            def test_e(self, db): pass                        # the module's db: 3

        def test_f(db): pass                                  # 3
        """
    )
    assert counted == FileCount(tests=(2 + 10 + 2) + (2 + 2 + 10 + 2) + 3 + 3)


def test_hypothesis_tests_cost_their_examples():
    counted = _count(
        """
        from hypothesis import given, settings, strategies as st
        import pytest

        @given(st.integers())
        def test_default(x): pass                    # hypothesis' default: 100 examples

        @settings(max_examples=10)
        @given(st.integers())
        def test_few(x): pass                        # 10

        @settings(deadline=None)
        @pytest.mark.parametrize("y", [1, 2])
        @given(x=st.integers())
        def test_cases(x, y): pass                   # 2 cases of 100 examples

        @settings(max_examples=5)
        def test_not_given(): pass                   # settings alone runs no examples: 1
        """
    )
    examples = 100 + 10 + 2 * 100
    assert counted.tests == 5
    assert counted.hypothesis == 4
    assert counted.extra_units == examples * EXAMPLE_TESTS - 4
    assert counted.units == 1 + examples * EXAMPLE_TESTS


HAS_MARKS = """
    import pytest
    pytestmark = pytest.mark.db

    @pytest.mark.slow
    def test_slow(): pass

    def test_plain(): pass

    @pytest.mark.parametrize("n", range(1000))
    @pytest.mark.stress
    def test_stress(n): pass

    @pytest.mark.slow
    class TestGroup:
        def test_in_class(self): pass

    @pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.stress)])
    def test_case_marks(x): pass
"""


@pytest.mark.parametrize(
    ("expression", "tests", "deselected"),
    [
        ("not stress", 1 + 1 + 1 + 2, 1000),  # a case's own mark leaves test_case_marks undecided: kept
        ("slow", 1 + 1 + 2, 1 + 1000),
        ("db", 1 + 1 + 1000 + 1 + 2, 0),  # the module's pytestmark marks every test
        ("not db", 0, 1 + 1 + 1000 + 1 + 2),
        ("slow and not stress", 1 + 1 + 2, 1 + 1000),
        ("mark(arg=1)", 1 + 1 + 1000 + 1 + 2, 0),  # keyword arguments: undecided, kept
        ("not (", 1 + 1 + 1000 + 1 + 2, 0),  # pytest refuses it when the shard runs: nothing decided
    ],
)
def test_marks_decide_minus_m(expression, tests, deselected):
    counted = _count(HAS_MARKS, CountRules(markexpr=expression))
    assert (counted.tests, counted.deselected) == (tests, deselected)
    assert counted.units == tests + deselected * DESELECTED_TESTS


@pytest.mark.parametrize(
    ("expression", "tests", "deselected"),
    [
        ("plain", 1 + 1000 + 2, 1 + 1),  # test_stress's ids and test_case_marks' may hold it: undecided, kept
        ("TestGroup or test_slow", 1 + 1 + 1000 + 2, 1),
        ("not slow", 1 + 1000 + 2, 1 + 1),  # a mark's name is a keyword too
        ("test_marks", 1 + 1 + 1000 + 1 + 2, 0),  # the module's file name
        ("tests", 1 + 1 + 1000 + 1 + 2, 0),  # a folder's name
    ],
)
def test_names_decide_minus_k(expression, tests, deselected):
    counted = count_tests(
        textwrap.dedent(HAS_MARKS), CountRules(keywordexpr=expression), path_names=("tests", "test_marks.py")
    )
    assert (counted.tests, counted.deselected) == (tests, deselected)


def test_a_data_folder_sizes_the_lists_that_are_not_literal():
    source = """
        import os, json, pytest
        from pathlib import Path

        HERE = os.path.dirname(os.path.abspath(__file__))
        CASES = os.path.join(HERE, "data", "cases")
        OTHER = Path(__file__).resolve().parent / "fixtures"

        def load():
            return [json.load(open(os.path.join(CASES, f))) for f in os.listdir(CASES)]

        @pytest.mark.parametrize("case", load())
        def test_valid(case): pass

        @pytest.mark.parametrize("case", [c for c in load() if c])
        def test_invalid(case): pass

        def test_plain(): pass
    """
    sizes = {("data", "cases"): 90, ("fixtures",): 3}
    looked: list[tuple[str, ...]] = []

    def files_in(parts: tuple[str, ...], suffixes: frozenset[str]) -> int:
        assert suffixes == frozenset()  # the module selects no suffix
        looked.append(parts)
        return sizes.get(parts, 0)

    counted = count_tests(textwrap.dedent(source), files_in=files_in)
    # the largest folder's 90 files shared by the two lists: 45 each
    assert counted == FileCount(tests=45 + 45 + 1, guessed=2, data_sized=2)
    assert sorted(looked) == [("data", "cases"), ("fixtures",)]
    # no data folder (or one with fewer files than the default): the default per list
    assert count_tests(textwrap.dedent(source)) == FileCount(tests=2 * GUESSED_CASES + 1, guessed=2)


def test_a_folder_named_only_to_build_a_deeper_path_is_not_counted_and_suffixes_reach_the_edge():
    # tomlkit 0.15.2's shape: cases listed in a file inside the data folder, filtered by suffix
    source = """
        import os, pytest

        ROOT = os.path.join(os.path.dirname(__file__), "toml-test", "tests")
        LISTED = os.path.join(ROOT, "files-1.1")
        names = [n for n in open(LISTED) if n.strip().endswith(".toml")]
        more = sorted(glob.glob(os.path.join(ROOT, "**/*.yaml")))

        @pytest.mark.parametrize("case", names)
        def test_valid(case): pass

        @pytest.mark.parametrize("case", more)
        def test_invalid(case): pass
    """
    looked: list[tuple[tuple[str, ...], frozenset[str]]] = []

    def files_in(parts: tuple[str, ...], suffixes: frozenset[str]) -> int:
        looked.append((parts, suffixes))
        return {("toml-test", "tests"): 1017, ("toml-test", "tests", "files-1.1"): 680}.get(parts, 0)

    counted = count_tests(textwrap.dedent(source), files_in=files_in)
    assert counted == FileCount(tests=680, guessed=2, data_sized=2)
    assert looked == [(("toml-test", "tests", "files-1.1"), frozenset({".toml", ".yaml"}))]


@pytest.mark.parametrize(
    ("code", "suffixes"),
    [
        ('n.endswith(".json")', {".json"}),
        ('n.endswith((".in", ".out"))', {".in", ".out"}),
        ('Path(d).rglob("*.toml")', {".toml"}),
        ('fnmatch.filter(names, "case_*.txt")', {".txt"}),
        ('n.endswith("json")', set()),  # no dot: a name's end, not a suffix
        ('glob.glob("*.t?ml")', set()),  # a wildcard in the suffix: not one literal suffix
        ("n.endswith(SUFFIX)", set()),
    ],
)
def test_literal_suffixes_are_the_ones_the_code_spells(code: str, suffixes: set[str]) -> None:
    assert literal_suffixes(ast.parse(code)) == suffixes


def test_test_units_name_the_tests_that_cost_more_than_one():
    source = """
        from hypothesis import given, settings, strategies as st

        class TestA:
            @settings(max_examples=20)
            @given(st.integers())
            def test_x(self, x): pass
            def test_plain(self): pass

            class TestInner:
                @given(st.integers())
                def test_y(self, y): pass

        @given(st.text())
        def test_z(s): pass
    """
    assert weighted_tests(textwrap.dedent(source)) == {
        "TestA::test_x": 20 * EXAMPLE_TESTS,
        "TestA::TestInner::test_y": 100 * EXAMPLE_TESTS,
        "test_z": 100 * EXAMPLE_TESTS,
    }


def _parts(source: str, rules: CountRules | None = None) -> dict[str, tuple[int, float]]:
    return {key: (cases, units) for key, cases, units in _count(source, rules).parts}


def test_parts_name_each_test_as_pytest_ids_it_with_its_cases():
    parts = _parts(
        """
        import pytest
        from hypothesis import given, settings, strategies as st

        CASES = [1, 2, 3]

        @pytest.mark.parametrize("x", CASES)
        @pytest.mark.parametrize("y", ["a", "b"])
        def test_literal(x, y): pass

        @pytest.mark.parametrize("x", [c * 2 for c in CASES])
        def test_built(x): pass

        @pytest.mark.parametrize("x", IMPORTED)
        def test_guessed(x): pass

        @given(st.integers())
        @settings(max_examples=20)
        def test_examples(n): pass

        class TestOuter:
            def test_m(self): pass
            class TestInner:
                @pytest.mark.parametrize("z", [1, 2])
                def test_n(self, z): pass

        class TestBase:
            def test_inherited(self): pass

        class TestChild(TestBase):
            def test_own(self): pass

        class TestOff:
            __test__ = False
            def test_never(self): pass

        class TestWithInit:
            def __init__(self): pass
            def test_never(self): pass

        def helper(): pass
        """
    )
    assert parts == {
        "test_literal": (6, 6.0),
        "test_built": (3, 3.0),
        "test_guessed": (GUESSED_CASES, float(GUESSED_CASES)),
        "test_examples": (1, 20 * EXAMPLE_TESTS),
        "TestOuter::test_m": (1, 1.0),
        "TestOuter::TestInner::test_n": (2, 2.0),
        "TestBase::test_inherited": (1, 1.0),
        "TestChild::test_inherited": (1, 1.0),  # a subclass collects its base's tests again
        "TestChild::test_own": (1, 1.0),
    }


def test_parts_leave_out_what_pytest_may_not_collect_under_that_name():
    source = """
        import sys
        import pytest

        if sys.version_info >= (3, 12):
            def test_new_python(): pass          # maybe not defined: not named
        try:
            from fast import speedups
        except ImportError:
            def test_fallback(): pass
        class TestSometimes:
            if sys.platform == "win32":
                def test_windows(self): pass
            def test_always(self): pass
        def test_rebound(): pass
        test_rebound = pytest.mark.skip(test_rebound)   # still a test, but bound by assignment
        from helpers import test_imported               # collected by pytest, unseen by the count

        def test_plain(): pass
        def test_twice(): pass
        def test_twice(): pass                   # the module's namespace holds one

        @pytest.mark.slow
        def test_slow(): pass
        """
    counted = _count(source, CountRules(markexpr="not slow"))
    named = {key for key, _cases, _units in counted.parts}
    assert named == {"TestSometimes::test_always", "test_plain", "test_twice"}
    assert counted.tests == 7  # every one still counts in the file's estimate
    assert counted.deselected == 1


def test_a_file_with_no_tests_has_no_parts():
    assert _count("import os\nclass Helper:\n    def test_x(self): pass\n").parts == ()
