"""What a test file's imports change in its count: test classes from the suite's other modules, and a
module-level importorskip of a module the shards' interpreter lacks (``static_count``, read with ``ast``)."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping

from hypothesis import given
from hypothesis import strategies as st

from ci_shards.plan.static_count import GUESSED_CASES, FileCount, Imports, count_tests, fixtures_in, import_skips


def _resolver(modules: Mapping[str, str]) -> Imports:
    """``from .name import …`` (or ``from name import …``) of the counted file or of another of ``modules``."""

    def resolve(_origin: str, _level: int, name: str | None) -> tuple[str, ast.Module] | None:
        source = modules.get(name or "")
        # ``from . import X`` names no module: the package's __init__.py, never the counted file's own origin ("")
        return (name or "__init__", ast.parse(textwrap.dedent(source))) if source is not None else None

    return resolve


def _count(source: str, modules: Mapping[str, str] | None = None, **kwargs: object) -> FileCount:
    return count_tests(textwrap.dedent(source), imports=_resolver(modules or {}), **kwargs)  # type: ignore[arg-type]


BASE = """
    class BaseTester:                 # no test class itself: its tests run only in subclasses
        def test_one(self): pass
        def test_two(self): pass

    class TestGraph(BaseTester):
        def test_three(self): pass
"""


def test_a_subclass_of_an_imported_base_counts_the_bases_tests_unnamed():
    # networkx 3.6.1's test_special.py: its classes subclass TestGraph and friends imported from siblings
    counted = _count(
        """
        from .base import BaseTester, TestGraph as _TestGraph

        class TestSpecial(_TestGraph):
            def test_own(self): pass

        class TestOther(BaseTester):
            pass
        """,
        {"base": BASE},
    )
    assert counted.tests == 4 + 2  # TestSpecial: own + three inherited; TestOther: two inherited
    # only what the file itself defines is named (another module's names are read, not run)
    assert [key for key, _cases, _units in counted.parts] == ["TestSpecial::test_own"]


def test_without_the_import_resolved_the_count_is_what_the_file_alone_says():
    source = """
        from .base import TestGraph as _TestGraph

        class TestSpecial(_TestGraph):
            def test_own(self): pass
    """
    assert _count(source).tests == 1
    assert _count(source, {"base": BASE}).tests == 4


def test_an_imported_test_class_is_collected_again_only_under_a_name_pytest_collects():
    assert _count("from .base import TestGraph\n", {"base": BASE}).tests == 3  # pytest collects it here too
    assert _count("from .base import TestGraph as _Graph\n", {"base": BASE}).tests == 0
    assert _count("from .base import BaseTester\n", {"base": BASE}).tests == 0  # not a test class by name
    # an assignment rebinds the name: what pytest finds is not the import
    assert _count("from .base import TestGraph\nTestGraph = None\n", {"base": BASE}).tests == 0
    unittest_base = "import unittest\nclass Cases(unittest.TestCase):\n    def test_a(self): pass\n"
    assert _count("from .cases import Cases\n", {"cases": unittest_base}).tests == 1  # unittest: whatever its name


def test_an_imported_class_finds_its_bases_in_its_own_module_through_further_imports():
    # test_multidigraph imports from test_multigraph, which imports from test_graph; the names of a base
    # are looked up where the class is defined, so a name clash with the counting file changes nothing
    middle = """
        from .base import TestGraph as _TestGraph

        class TestMulti(_TestGraph):
            def test_multi(self): pass

        class TestEdgeSubgraph:
            def test_sub(self): pass
    """
    counted = _count(
        """
        from .middle import TestMulti as _TestMulti, TestEdgeSubgraph as _Sub

        class TestGraph:                  # the same name as base's class: not the base of anything here
            def test_local(self): pass

        class TestMultiDi(_TestMulti):
            pass

        class TestEdgeSubgraph(_Sub):     # the same name as its base: still inherits its test
            pass
        """,
        {"base": BASE, "middle": middle},
    )
    assert counted.tests == 1 + 4 + 1


def test_a_cycle_of_imports_ends():
    cyclic = {"a": "from .b import TestB\nclass TestA:\n    def test_a(self): pass\n", "b": "from .a import TestA\n"}
    counted = _count("from .a import TestA as _A\nclass TestMine(_A):\n    pass\n", cyclic)
    assert counted.tests == 1


@given(
    own=st.lists(st.sampled_from(["test_a", "test_b", "test_c", "helper"]), max_size=4),
    inherited=st.lists(st.sampled_from(["test_a", "test_d", "test_e", "util"]), min_size=1, max_size=4),
)
def test_importing_the_base_counts_as_defining_it_in_the_file(own: list[str], inherited: list[str]) -> None:
    # the rule in general: a base class read from another module gives a subclass what the same base
    # defined in the file gives it (the file's own methods win on a name, as in the MRO)
    base = "class Base:\n" + "".join(f"    def {name}(self): pass\n" for name in inherited)
    sub = "class TestSub(Base):\n" + ("".join(f"    def {name}(self): pass\n" for name in own) or "    pass\n")
    together = count_tests(base + sub)
    imported = count_tests("from .base import Base\n" + sub, imports=_resolver({"base": base}))
    assert imported.tests == together.tests == len({n for n in [*own, *inherited] if n.startswith("test")})


def test_module_level_importorskip_names_its_top_level_module():
    module = ast.parse(
        textwrap.dedent(
            """
            import pytest
            np = pytest.importorskip("numpy")
            pytest.importorskip("scipy.sparse")
            mpl: object = pytest.importorskip("matplotlib", minversion="3.5")
            if True:
                pytest.importorskip("under_if")       # not certain to run
            def helper():
                pytest.importorskip("in_function")    # runs with the test, not at import
            pytest.importorskip(NAME)                 # not a literal
            """
        )
    )
    assert import_skips(module) == ("numpy", "scipy.sparse", "matplotlib")


def test_a_try_of_imports_whose_import_error_skips_the_module_names_its_modules():
    # structlog 26.1.0's tests/test_twisted.py: 28 tests, none run without twisted
    module = ast.parse(
        textwrap.dedent(
            """
            import pytest
            try:
                import twisted.python.log
                from structlog.twisted import JSONRenderer
                from . import helpers                 # relative: the suite's own
            except ImportError:
                pytest.skip("no twisted", allow_module_level=True)
            try:
                import simplejson
            except (ModuleNotFoundError, OSError):
                raise unittest.SkipTest("no simplejson")
            try:
                import ujson
            except ImportError:
                ujson = None                          # a fallback, no skip
            try:
                import orjson
            except ImportError:
                pytest.skip("no orjson")              # not allow_module_level: an error, not a skip
            try:
                import msgpack
            except ValueError:
                pytest.skip("?", allow_module_level=True)  # not what a missing module raises
            """
        )
    )
    assert import_skips(module) == ("twisted.python.log", "structlog.twisted", "simplejson")


SKIPPING = """
    import pytest
    sp = pytest.importorskip("scipy")

    def test_a(): pass

    @pytest.mark.parametrize("x", [1, 2, 3])
    def test_b(x): pass
"""


def test_a_file_that_skips_at_import_counts_no_test():
    counted = _count(SKIPPING, has_module=lambda name: name != "scipy")
    assert counted == FileCount(tests=0, skipped_at_import=4)
    assert counted.parts == ()  # nothing to cut: its import is all a shard pays


def test_a_file_that_skips_at_import_of_a_missing_submodule_counts_no_test():
    source = SKIPPING.replace('"scipy"', '"scipy._compiled"')
    assert _count(source, has_module=lambda name: name != "scipy._compiled") == FileCount(tests=0, skipped_at_import=4)
    assert _count(source, has_module=lambda name: name == "scipy._compiled").tests == 4  # asked by its full name


def test_a_file_whose_importorskip_is_met_counts_as_before():
    assert _count(SKIPPING, has_module=lambda _name: True) == _count(SKIPPING) == FileCount(tests=4)
    assert _count(SKIPPING, has_module=lambda name: name != "pandas").tests == 4  # another module missing


def test_a_parametrize_over_a_name_of_the_class_body_counts_that_list():
    # pint 0.25.3's TestOffsetUnitMath: `additions = [...]` in the class body, `@parametrize(..., additions)` on
    # its methods (372 cases, counted 4 each before); a subclass inherits them with the lists of the class
    # that defines them, and the class's name wins over the module's, as in Python's class scope
    counted = _count(
        """
        import pytest

        cases = [1, 2]

        class TestMath:
            cases = [1, 2, 3, 4, 5]
            more = [(1, 2), (3, 4), (5, 6)]

            @pytest.mark.parametrize("x", cases)
            def test_cases(self, x): pass

            @pytest.mark.parametrize(("a", "b"), more)
            def test_more(self, a, b): pass

        class TestFloat(TestMath):
            pass

        @pytest.mark.parametrize("x", cases)
        def test_module(x): pass
        """
    )
    assert counted.tests == 2 * (5 + 3) + 2
    assert counted.guessed == 0


def test_only_imports_that_can_be_a_class_or_a_base_are_read():
    asked: list[str | None] = []
    modules = {"helpers": "def make_graph(): pass\nclass Tool:\n    pass\n", "base": BASE}

    def resolve(origin: str, level: int, name: str | None) -> tuple[str, ast.Module] | None:
        asked.append(name)
        return _resolver(modules)(origin, level, name)

    source = "from .helpers import make_graph, tool\nfrom .base import BaseTester as _B\nclass TestX(_B):\n    pass\n"
    assert count_tests(source, imports=resolve).tests == 2
    assert asked == ["base"]  # make_graph and tool are written as functions: helpers is never read


def test_a_module_asked_twice_for_different_classes_resolves_both_bases():
    # networkx: test_multidigraph.py imports BaseMultiGraphTester, then TestMultiGraph, from test_multigraph.py,
    # whose TestMultiGraph subclasses a TestGraph test_multigraph imports from test_graph.py
    middle = """
        from .base import TestGraph as _TestGraph

        class BaseMulti:
            def test_base_multi(self): pass

        class TestMulti(BaseMulti, _TestGraph):
            def test_multi(self): pass
    """
    counted = _count(
        """
        from .middle import BaseMulti
        from .middle import TestMulti as _TestMulti

        class TestMultiDi(_TestMulti):
            pass
        """,
        {"base": BASE, "middle": middle},
    )
    assert counted.tests == 2 + 3


def test_a_class_that_rebinds_the_name_of_its_imported_base_inherits_its_tests():
    # pyflakes 4.1.0's test_doctests.py: ``from pyflakes.test.test_other import Test as TestOther`` then
    # ``class TestOther(_DoctestMixin, TestOther)``: counted 0 where pytest collects the base's tests
    base = "class Test:\n    def test_a(self): pass\n    def test_b(self): pass\n    def test_c(self): pass\n"
    source = """
        from other import Test as TestOther

        class Mixin:
            def helper(self): pass

        class TestOther(Mixin, TestOther):
            def test_own(self): pass
        """
    assert _count(source, {"other": base}).tests == 4
    # the name's last class statement still wins where one is above (``class TestA(TestA)`` in one file)
    local_base = source.replace("from other import Test as TestOther", "class TestOther:\n            pass")
    assert _count(local_base).tests == 1


def test_a_mixin_imported_from_the_package_itself_gives_its_tests():
    # cachetools 8.0.2: ``from . import CacheTestMixin`` (the tests package's __init__.py), counted 266 of 476
    init = "class CacheTestMixin:\n    def test_get(self): pass\n    def test_set(self): pass\n"
    source = """
        import unittest
        from . import CacheTestMixin

        class LRUCacheTest(unittest.TestCase, CacheTestMixin):
            def test_lru(self): pass
        """
    assert _count(source, {"": init}).tests == 3
    assert _count(source).tests == 1  # unresolved: what the file alone says


def test_an_argument_list_of_another_module_of_the_suite_counts_its_length():
    # icalendar 7.3.2: ``from . import timezone_ids`` in its conftest, ``@pytest.fixture(params=timezone_ids.TZIDS)``
    # over a literal list of 595 ids in tests/timezone_ids.py; each test asking for it was counted 4 cases
    modules = {
        "timezone_ids": 'TZIDS = ["Europe/Berlin", "Europe/Paris", "Asia/Tokyo"]\nBUILT = [t.lower() for t in TZIDS]\n',
        "data": "from elsewhere import NAMES\nCASES = [(1, 2), (3, 4)] * 3\nNAMED = {'a': 1, 'b': 2}\nOPAQUE = NAMES\n",
    }
    counted = _count(
        """
        import pytest
        from . import timezone_ids
        from .data import CASES, NAMED as BY_NAME, OPAQUE
        from .missing import GONE

        @pytest.fixture(params=timezone_ids.TZIDS)
        def tzid(request): return request.param

        def test_ids(tzid): pass                             # 3

        @pytest.mark.parametrize("tz", timezone_ids.BUILT)
        def test_built(tz): pass                             # 3: computed in its own module

        @pytest.mark.parametrize(("a", "b"), CASES)
        def test_cases(a, b): pass                           # 6

        @pytest.mark.parametrize("name", BY_NAME.keys())
        def test_named(name): pass                           # 2

        @pytest.mark.parametrize("x", OPAQUE)
        def test_opaque(x): pass                             # not known there either: 4

        @pytest.mark.parametrize("x", GONE)
        def test_gone(x): pass                               # no such module of the suite: 4

        @pytest.mark.parametrize("x", timezone_ids.NOT_THERE)
        def test_not_there(x): pass                          # 4
        """,
        modules,
    )
    assert counted == FileCount(tests=3 + 3 + 6 + 2 + 3 * GUESSED_CASES, guessed=3)


def test_a_conftest_fixture_over_another_module_of_the_suite_counts_its_length():
    conftest = """
import pytest
from . import timezone_ids
@pytest.fixture(params=timezone_ids.TZIDS)
def tzid(request): pass
"""
    fixtures = fixtures_in(conftest, imports=_resolver({"timezone_ids": "TZIDS = ['a', 'b', 'c', 'd', 'e']\n"}))
    assert fixtures["tzid"].params == 5
