"""report/split_dependencies.py: a test pytest-dependency skipped because its dependency passed on another shard."""

from __future__ import annotations

from ci_shards.model.outcome import CaseOutcome, CaseResult
from ci_shards.report.split_dependencies import SplitDependency, split_dependencies, split_notes, split_reason


def _case(test_id: str, outcome: CaseOutcome, message: str = "") -> CaseResult:
    return CaseResult(test_id=test_id, name=test_id.rpartition("::")[2], outcome=outcome, message=message)


# pytest-dependency 0.6.1's skip as the shard's JUnit holds it (conformance run 8)
SKIPPED_B = _case("t/test_b.py::test_b", CaseOutcome.SKIPPED, "Skipped: test_b depends on t/test_a.py::test_a")
PASSED_A = _case("t/test_a.py::test_a", CaseOutcome.PASSED)


def test_a_test_skipped_for_a_dependency_that_passed_on_another_shard_is_named() -> None:
    found = split_dependencies([(1, [PASSED_A]), (2, [SKIPPED_B])])
    assert found == [SplitDependency("t/test_b.py::test_b", 2, "t/test_a.py::test_a", 1)]
    assert split_reason(found) == (
        "1 test skipped by pytest-dependency because the test it depends on passed on another shard (plain pytest"
        " runs them): join their files with --keep-together PATTERN"
    )
    assert split_notes(found) == [
        "did not run: t/test_b.py::test_b (shard 2) — it depends on t/test_a.py::test_a, which passed on shard 1"
    ]


def test_a_skip_plain_pytest_makes_too_is_no_finding() -> None:
    failed_a = _case("t/test_a.py::test_a", CaseOutcome.FAILED)
    assert split_dependencies([(1, [failed_a]), (2, [SKIPPED_B])]) == []  # the dependency failed: skipped anyway
    assert split_dependencies([(1, [PASSED_A, SKIPPED_B])]) == []  # same shard: pytest's own order decided
    module_scope = _case("t/test_b.py::test_b", CaseOutcome.SKIPPED, "Skipped: test_b depends on test_a")
    assert split_dependencies([(1, [PASSED_A]), (2, [module_scope])]) == []  # a name within its file
    assert split_reason([]) == "" and split_notes([]) == []


def test_more_than_five_are_counted_after_the_first_five() -> None:
    found = [SplitDependency(f"t/test_b.py::test_{n}", 2, "t/test_a.py::test_a", 1) for n in range(7)]
    assert split_notes(found)[-1] == "did not run: 2 more tests skipped the same way"
    assert split_reason(found).startswith("7 tests skipped by pytest-dependency because the test they depend on")
