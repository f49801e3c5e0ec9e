"""Property (issue 8): the status ``run`` ends a shard with is the status ``aggregate`` gives the folder it wrote.

Generated shard folders: random plans whose items are files, classes, tests and parametrized tests with ``::``,
``[``, ``/`` and unicode in their names; reports that miss items, repeat them, add tests nobody planned, name a
planned test by a parametrized id, fail some, or have no report at all. Each goes through the run stage's pure
core and writer (classify.decide, shard_output.write_report / build_outcome / write_outcome) and back through
aggregate's reader and judge (artifacts.read_shard_folder, aggregate.decide). Files only, no processes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_shards.model.outcome import CaseOutcome, CaseResult, shard_dir_name
from ci_shards.report.aggregate import decide as aggregate
from ci_shards.report.artifacts import read_shard_folder
from ci_shards.run.classify import Policy, Report, Run, decide
from ci_shards.run.shard_output import build_outcome, write_outcome, write_report
from tests.unit.aggregate_fixtures import make_plan

# name parts as test ids really look, and the characters that break naive matchers (strategies built once:
# building them inside the draw costs more than the whole check)
_WORD = st.text(alphabet="abcxyzé测_-.", min_size=1, max_size=6)
_PARAM = st.text(alphabet="ab1:/[]é测 -.", min_size=0, max_size=8)  # parametrize ids hold anything
_FILE = st.builds(lambda d, w: f"{d}/test_{w}.py", st.sampled_from(["tests", "tests/[sub]", "tests/ü"]), _WORD)
_SCOPE = st.one_of(st.just(()), _WORD.map(lambda w: (f"Test{w}",)))
_NAME = st.builds(lambda w, p: f"test_{w}" if p is None else f"test_{w}[{p}]", _WORD, st.none() | _PARAM)
TEST_IDS = st.builds(lambda f, s, n: "::".join([f, *s, n]), _FILE, _SCOPE, _NAME)
_OUTCOMES = st.sampled_from([CaseOutcome.PASSED] * 6 + [CaseOutcome.SKIPPED, CaseOutcome.FAILED, CaseOutcome.ERROR])
# per planned test: planned as (0) the test, (1) its function, (2) its file; and how the report shows it
_FATE = st.tuples(
    st.integers(0, 2), st.sampled_from(["exact", "exact", "missing", "twice", "param", "renamed"]), _PARAM, _OUTCOMES
)


def _item_of(test_id: str, level: int) -> str:
    function = test_id.split("[", 1)[0] if "::" in test_id.split("[", 1)[0] else test_id
    return (test_id, function, test_id.split("::", 1)[0])[level]


def _case(test_id: str, outcome: CaseOutcome) -> CaseResult:
    file, _, rest = test_id.partition("::")
    classname, _, name = rest.rpartition("::")
    return CaseResult(test_id=test_id, name=name or test_id, classname=classname, file=file, outcome=outcome)


def _shown(test_id: str, item: str, how: str, param: str) -> list[str]:
    if how == "param":  # a planned function reported by one of its parametrized cases (``t.py::t[x::y]``)
        return [f"{item}[{param}]" if item == test_id.split("[", 1)[0] else test_id]
    return {"exact": [test_id], "missing": [], "twice": [test_id, test_id]}.get(
        how, [test_id.replace("test_", "t_", 1)]
    )


@st.composite
def shard_runs(draw: st.DrawFn) -> tuple[list[str], list[str], list[CaseResult], int | None, bool]:
    tests = draw(st.lists(TEST_IDS, max_size=8, unique=True))
    mine: dict[str, None] = {}
    reported: list[CaseResult] = []
    for test_id in tests:
        level, how, param, outcome = draw(_FATE)
        item = _item_of(test_id, level)
        mine[item] = None
        reported += [_case(t, outcome) for t in _shown(test_id, item, how, param)]
    # a planned item may cover another (a file and one of its tests): the more specific one is dropped
    planned = [i for i in mine if not any(i != o and i.startswith(o + "::") for o in mine)]
    foreign = draw(st.lists(st.tuples(TEST_IDS, st.booleans(), _OUTCOMES), max_size=3))
    # planned in the other shard: in files of their own (an item covering another shard's item is a plan
    # where one test belongs to two items, which no planner writes)
    files = {i.split("::", 1)[0] for i in planned}
    others = [t for t, elsewhere, _o in foreign if elsewhere and t.split("::", 1)[0] not in files]
    reported += [_case(t, o) for t, _e, o in foreign]
    exit_code = draw(st.sampled_from([0, 0, 1, None]))  # None: no report at all
    return planned, others, reported, exit_code, draw(st.booleans())


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One shard folder, rewritten by every example (creating and removing folders would cost more than the check)."""
    path = tmp_path_factory.mktemp("judge") / shard_dir_name(1, 2)
    path.mkdir()
    (path / "output.log").write_bytes(b"")
    return path


# A property test runs twice: on a sample in the fast run, and on the full sample in its slow-marked
# `_thorough` twin, which calls the same check (`.hypothesis.inner_test`); tests/README.md, "Property tests".
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=shard_runs())
def test_run_status_is_aggregates_judgement_of_the_folder_it_wrote(folder: Path, case) -> None:
    planned, others, reported, exit_code, accept_exit_code = case
    plan = make_plan([planned, list(dict.fromkeys(o for o in others if o not in planned))])
    report = Report(cases=tuple(reported)) if exit_code is not None else Report(problem="no test report")
    runs = [Run(rerun=0, items=tuple(planned), exit_code=exit_code or 0, signal=None, report=report)] if planned else []
    name = folder.name
    verdict = decide(
        shard_index=1, shard_name=name, planned=planned, runs=runs, policy=Policy(accept_exit_code=accept_exit_code)
    )
    verdict = write_report(folder, verdict, name=name, planned=planned, shard_index=1)
    outcome = build_outcome(
        plan=plan,
        shard_index=1,
        env={},
        runs=runs,
        attempts=[],
        leaked=[],
        verdict=verdict,
        started_at="",
        elapsed=1.0,
        planned=planned,
        log_path=folder / "output.log",
        subreaper=False,
    )
    write_outcome(folder, outcome, verdict.records)
    seen = aggregate(plan, [read_shard_folder(folder)])
    judged = seen.shards[0]
    assert (outcome.status, outcome.reason) == (judged.status, judged.reason)
    if outcome.accounted:
        # the items run said were not run are exactly the ones aggregate finds missing in this shard
        assert set(outcome.not_run) == set(seen.accounting.missing) & set(planned)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=shard_runs())
def test_run_status_is_aggregates_judgement_of_the_folder_it_wrote_thorough(folder: Path, case) -> None:
    test_run_status_is_aggregates_judgement_of_the_folder_it_wrote.hypothesis.inner_test(folder, case)
