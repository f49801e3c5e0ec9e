"""pytest's --junitxml names a collector by its dotted module: read back as the planned file it is."""

from __future__ import annotations

from ci_shards.junit import parse_junit_bytes
from ci_shards.junit.read import collectors_by_file
from ci_shards.model.matching import collector_files
from ci_shards.model.outcome import COLLECTION_ERROR_TYPE, COLLECTOR_SKIPPED_TYPE, CaseOutcome, Totals

# what pytest 9.2 writes for tests/test_np.py (a module-level importorskip), tests/test_bad.py (an import error at
# collection) and one test of tests/test_ok.py (``pytest --junitxml``, xunit2: no file attribute)
PYTEST_REPORT = b"""<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest"
errors="1" failures="0" skipped="1" tests="3" time="0.1"><testcase classname="" name="tests.test_np" time="0.000">
<skipped message="collection skipped">('/p/tests/test_np.py', 2, "Skipped: could not import 'numpy'")</skipped>
</testcase>
<testcase classname="" name="tests.test_bad" time="0.000"><error message="collection failure">ImportError</error>
</testcase><testcase classname="tests.test_ok" name="test_a" time="0.001" /></testsuite></testsuites>"""


def test_a_collector_of_a_pytest_report_is_named_by_its_planned_file() -> None:
    cases = parse_junit_bytes(PYTEST_REPORT, "junit.xml")
    assert [c.test_id for c in cases] == ["tests.test_np", "tests.test_bad", "tests/test_ok.py::test_a"]
    planned = ["tests/test_np.py", "tests/test_bad.py", "tests/test_ok.py"]
    named = collectors_by_file(cases, planned)
    assert [(c.test_id, c.outcome, c.type) for c in named] == [
        ("tests/test_np.py", CaseOutcome.SKIPPED, COLLECTOR_SKIPPED_TYPE),
        ("tests/test_bad.py", CaseOutcome.ERROR, COLLECTION_ERROR_TYPE),
        ("tests/test_ok.py::test_a", CaseOutcome.PASSED, ""),
    ]
    totals = Totals.of(named)
    assert (totals.tests, totals.passed, totals.skipped, totals.errors) == (
        3,
        1,
        1,
        1,
    )  # pytest: 1 passed, 1 skipped, 1 error


def test_a_collector_no_single_planned_file_names_stays_as_written() -> None:
    cases = parse_junit_bytes(PYTEST_REPORT, "junit.xml")
    # a part of the file planned (still one planned file), no plan of it, or two files of one dotted name
    assert collectors_by_file(cases, ["tests/test_np.py::test_x"])[0].test_id == "tests/test_np.py"
    assert collectors_by_file(cases, ["tests/test_ok.py"])[0].test_id == "tests.test_np"
    assert collectors_by_file(cases, ["tests/test_np.py", "tests.test_np.py"])[0].test_id == "tests.test_np"


def test_only_a_python_modules_dotted_name_names_a_file() -> None:
    # a text file pytest collects (a doctest glob) and a folder keep their own ids; an id with `::` is a test's
    ids = ["tests.test_a", "tests.test_a::test_x", "docs.index", "tests", "pkg.__init__"]
    files = ["tests/test_a.py", "docs/index.txt", "tests", "pkg/__init__.py"]
    assert collector_files(ids, files) == {"tests.test_a": "tests/test_a.py", "pkg.__init__": "pkg/__init__.py"}


# what pytest 9.2 writes under --doctest-modules for tests/test_sp.py (a module-level importorskip) and
# tests/test_bad.py (an import error): each file is collected as a doctest module and as a test module, both fail or
# skip, and its reporter (one per node id) puts the two in one testcase; its summary says "2 skipped, 2 errors"
DOCTEST_MODULES_REPORT = b"""<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite
name="pytest" errors="2" failures="0" skipped="2" tests="5" time="0.1"><testcase classname="" name="tests.test_sp"
time="0.000"><skipped message="collection skipped">no scipy</skipped><skipped message="collection skipped">no
scipy</skipped></testcase><testcase classname="" name="tests.test_bad" time="0.000"><error message="collection
failure">ImportError</error><error message="collection failure">ImportError</error></testcase><testcase
classname="tests.test_ok" name="test_a" time="0.001" /></testsuite></testsuites>"""


def test_a_testcase_of_two_collectors_pytest_skipped_or_failed_is_two_tests_as_pytest_counts_them() -> None:
    # networkx 3.6.1 under --doctest-modules with numpy only: pytest's "398 skipped" counts 34 files twice, each one
    # testcase of its --junitxml with two <skipped> (conformance run 12); read as one, a command that writes pytest's
    # report counted 364
    planned = ["tests/test_sp.py", "tests/test_bad.py", "tests/test_ok.py"]
    named = collectors_by_file(parse_junit_bytes(DOCTEST_MODULES_REPORT, "junit.xml"), planned)
    assert [(c.test_id, c.outcome) for c in named] == [
        ("tests/test_sp.py", CaseOutcome.SKIPPED),
        ("tests/test_sp.py", CaseOutcome.SKIPPED),
        ("tests/test_bad.py", CaseOutcome.ERROR),
        ("tests/test_bad.py", CaseOutcome.ERROR),
        ("tests/test_ok.py::test_a", CaseOutcome.PASSED),
    ]
    totals = Totals.of(named)
    assert (totals.tests, totals.passed, totals.skipped, totals.errors) == (5, 1, 2, 2)  # pytest's tests="5"
    # a report of another tool (not pytest's) keeps one case per testcase
    other = DOCTEST_MODULES_REPORT.replace(b'name="pytest tests"', b'name="x"').replace(b'name="pytest"', b'name="y"')
    assert len(parse_junit_bytes(other, "junit.xml")) == 3
