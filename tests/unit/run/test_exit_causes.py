"""run/exit_causes.py: the cause a run's output names for a non-zero exit its report does not explain."""

from __future__ import annotations

import pytest

from ci_shards.run.exit_causes import exit_cause

# pytest-cov's terminal report ending a run whose gate failed (pytest_cov/plugin.py's wording)
COV_REPORT = (
    "---------- coverage: platform linux, python 3.11.7-final-0 -----------\n"
    "Name                Stmts   Miss Branch BrPart  Cover\n"
    "TOTAL                2315   1130    692      0    51%\n"
    "Coverage XML written to file coverage.xml\n"
    "FAIL Required test coverage of 99% not reached. Total coverage: 51.21%\n"
    "=========================== 169 passed in 3.80s ===========================\n"
)


def test_pytest_covs_failed_gate_is_named_with_its_numbers() -> None:
    cause = exit_cause(COV_REPORT)
    # the gate may be --cov-fail-under or coverage.py's own fail_under (propcache 0.5.4's .coveragerc: conformance
    # run 10), and pytest-cov's line does not say which: the reason names both
    assert cause.startswith(
        "pytest-cov's coverage gate of 99% (--cov-fail-under, or fail_under in coverage.py's settings) failed on"
        " this shard's 51.21%: "
    )
    assert "--cov-fail-under=0" in cause and "aggregate --fail-under" in cause
    assert "\n" not in cause


@pytest.mark.parametrize(
    "output",
    [
        "",
        COV_REPORT.replace("FAIL Required test coverage of 99% not reached", "Required test coverage of 99% reached"),
        "  FAIL Required test coverage of 99% not reached. Total coverage: 51.21%\n",  # not pytest-cov's own line
        "E   AssertionError: FAIL Required test coverage of 99% not reached. Total coverage: 51.21%\n",
    ],
)
def test_output_without_a_known_cause_names_none(output: str) -> None:
    assert exit_cause(output) == ""


# pytest-timeout 2.x's thread method: the banner (terminal.sep("+", "Timeout")) starts mid-line, after the
# test's progress dot, then every thread's stack, then the banner again, then os._exit(1)
TIMEOUT_DUMP = (
    "tests/test_one.py .+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++\n"
    "~~~~~~~~~~~~~~~~~~~~ Stack of MainThread (140053391170432) ~~~~~~~~~~~~~~~~~~~~~\n"
    '  File "/tmp/p/tests/test_one.py", line 5, in test_b\n    time.sleep(5)\n'
    "+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++\n"
)


def test_pytest_timeouts_thread_method_is_named_with_the_method_that_fails_the_test_alone() -> None:
    cause = exit_cause(TIMEOUT_DUMP)
    assert cause.startswith("pytest-timeout's thread method ended the process at the test's timeout")
    assert "timeout_method = signal" in cause
    assert exit_cause("E   assert 'Timeout' in text\n") == ""  # the word alone is no banner


# syrupy 7.0.1's snapshot report closing a shard of its own suite that ran without test_custom_snapshot_directory_2.py
SYRUPY_REPORT = (
    "--------------------------- snapshot report summary ----------------------------\n"
    "1 snapshot failed. 63 snapshots passed. 2 snapshots unused.\n"
    "\n"
    "Re-run pytest with --snapshot-update to delete unused snapshots.\n"
    "============================== 91 passed in 1.06s ==============================\n"
)


def test_syrupys_unused_snapshots_are_named_with_the_way_to_check_them_across_shards() -> None:
    cause = exit_cause(SYRUPY_REPORT)
    assert cause.startswith("syrupy found 2 unused snapshots on this shard: ")
    assert "--snapshot-warn-unused" in cause and "--keep-together" in cause
    assert exit_cause("1 snapshot unused.\n").startswith("syrupy found 1 unused snapshot on this shard")
    assert exit_cause("63 snapshots passed.\n") == ""
    assert exit_cause("E   assert '2 snapshots unused.' == ''\n") == ""  # not syrupy's own line


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("ERROR: not found: /p/tests/test_x.py::TestNo\n(no match in any of [<Module test_x.py>])\n",
         "not found: /p/tests/test_x.py::TestNo"),
        ("ERROR: file or directory not found: tests/gone\n", "file or directory not found: tests/gone"),
        ("ERROR: module or package not found: nopkg (missing __init__.py?)\n",
         "module or package not found: nopkg (missing __init__.py?)"),
        # -m and -k (conformance run 12: exceptiongroup's --strict-markers addopts under -m nosuchmark)
        ("ERROR: Unknown marker(s) in '-m' expression: nosuchmark. Use 'pytest --markers' to see available markers.\n",
         "Unknown marker(s) in '-m' expression: nosuchmark. Use 'pytest --markers' to see available markers."),
        ("ERROR: Wrong expression passed to '-m': a and: at column 6: expected not OR left parenthesis OR identifier;"
         " got end of input\n",
         "Wrong expression passed to '-m': a and: at column 6: expected not OR left parenthesis OR identifier; got end"
         " of input"),
        ("ERROR: Wrong expression passed to '-k': (x: at column 3: expected right parenthesis; got end of input\n",
         "Wrong expression passed to '-k': (x: at column 3: expected right parenthesis; got end of input"),
    ],
)  # fmt: skip
def test_pytests_usage_error_about_an_argument_is_named(line: str, what: str) -> None:
    # a discovery plan of `-- test_a.py test_b.py::TestNo` (the file exists, the name does not): each shard's pytest
    # stops there (exit 4) and its reason was "zero tests executed" alone (conformance run 10)
    output = "============================ no tests ran in 0.15s =============================\n" + line
    assert exit_cause(output) == f"pytest stopped at a usage error before any test ran: {what}"
