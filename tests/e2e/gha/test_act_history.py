"""The test history through the real action, run twice with act: the first workflow run on the default branch
classifies the injected failure as new (nothing to compare with yet) and records it; the second, starting from
the cache the first saved, finds it already failing on main: known, and with ``fail-on: new`` the report passes.
The first run is the failing run test_act_pytest.py reads too (conftest.py, ``failing_run``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.gha.act_harness import ActRun, run_act
from tests.e2e.gha.test_act_pytest import FAILING_GROUP, INJECTED_ID, report

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@FAILING_GROUP
def test_the_injected_failure_is_new_then_known(act: str, wheels: Path, failing_run: tuple[Path, ActRun]) -> None:
    repo, first = failing_run  # the example workflow with the failing test and fail-on: new, run once
    assert first.job_results().get("report") == "failed", first.log[-3000:]
    summary = (report(first) / "summary.md").read_text()
    assert "### 🆕 New failures (1)" in summary and "No test history of main to compare with yet" in summary
    assert "test_injected_failure" in summary.split("### 🆕 New failures (1)")[1].split("###")[0]

    work = repo.parent / "second"
    work.mkdir()
    second = run_act(act, repo, work, wheels, caches_of=first)
    print(f"second act run took {second.seconds:.1f}s; log in {work / 'act.log'}")
    summary = (report(second) / "summary.md").read_text()
    assert "### 📌 Known failures (1): not failing this build (--fail-on new)" in summary, summary[:3000]
    known = summary.split("### 📌 Known failures (1)")[1].split("###")[0]
    assert "test_injected_failure" in known and "failing on main since" in known
    assert "New failures" not in summary
    assert second.job_results().get("report") == "succeeded", second.log[-3000:]
    assert INJECTED_ID.endswith("test_injected_failure")
