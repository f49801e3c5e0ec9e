"""report_failures.py: the words for counts and the copy-paste pytest command."""

from __future__ import annotations

from ci_shards.common.console import plural
from ci_shards.model.failures import FailureKind, FailureRecord
from ci_shards.report.failures import failure_counts, pytest_command
from ci_shards.report.groups import group_failures
from ci_shards.report.verdict import Totals

HOSTILE = [
    "tests/test_a.py::test_x[it's]",
    "tests/test_a.py::test_y[$(touch pwned)]",
    'tests/test_a.py::test_z[`id`;rm -rf ~ & echo \\ " > out]',
    "tests/test_b.py::test_w[\nnext line]",
]


def _groups(ids, message="boom"):
    return group_failures(FailureRecord(shard=1, test_id=i, kind=FailureKind.FAILED, message=message) for i in ids)


def test_counts_have_one_vocabulary():
    assert failure_counts(Totals(failed=7, errors=2)) == "7 failed, 2 errors"
    assert failure_counts(Totals(failed=7, errors=1)) == "7 failed, 1 error"
    assert failure_counts(Totals(failed=1)) == "1 test failed"
    assert failure_counts(Totals(failed=3)) == "3 tests failed"
    assert failure_counts(Totals(errors=1)) == "1 error"
    assert plural(1, "shard") == "1 shard"
    assert plural(2, "child", "children") == "2 children"


def test_pytest_command_single_quotes_every_id():
    command, left_out = pytest_command(_groups(HOSTILE), max_ids=10, max_chars=2000)
    assert left_out == 0
    assert command.startswith("python -m pytest \\\n    'tests/test_a.py::test_x[it'\"'\"'s]' \\\n")
    assert "'tests/test_a.py::test_y[$(touch pwned)]'" in command


def test_pytest_command_is_capped_by_whole_ids_and_samples_every_group():
    ids = [f"tests/test_a.py::test_{i}" for i in range(300)]
    groups = _groups(ids[:150], "first") + _groups(ids[150:], "second")
    command, left_out = pytest_command(groups, max_ids=20, max_chars=10_000)
    assert left_out == 280
    assert "test_0'" in command
    assert "test_150'" in command  # taken in turn from each group
    command, left_out = pytest_command(groups, max_ids=300, max_chars=200)
    assert len(command) <= 200
    assert command.count("'") % 2 == 0  # never an id cut in half
    assert left_out == 300 - command.count("tests/")
    assert pytest_command(_groups(["x" * 500 + ".py::t"]), max_ids=5, max_chars=100) == ("python -m pytest", 1)


def test_a_parametrized_test_whose_every_case_failed_is_named_once():
    # issue 27: 30 failing cases of one test listed 30 ids; pytest runs them all from the bare id
    failing = [f"t.py::test_same[{n}]" for n in range(30)]
    every = [*failing, "t.py::test_other[a]", "t.py::test_other[b]", "t.py::test_ok"]
    groups = _groups(failing) + _groups(["t.py::test_other[a]"], "different")
    command, left_out = pytest_command(groups, max_ids=20, max_chars=2000, every=every)
    assert command == "python -m pytest \\\n    't.py::test_same' \\\n    't.py::test_other[a]'"
    assert left_out == 0


def test_no_command_for_ids_that_are_not_pytest_node_ids():
    assert pytest_command(_groups(["src/sum.test.js::adds", "tests/test_a.py::t"]), max_ids=5, max_chars=999) == (
        "",
        0,
    )
    assert pytest_command([], max_ids=5, max_chars=999) == ("", 0)
