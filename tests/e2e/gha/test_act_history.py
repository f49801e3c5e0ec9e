"""The test history through the real action, run twice with act: the first workflow run on the default branch
classifies the injected failure as new (nothing to compare with yet) and records it; the second, starting from
the cache the first saved, finds it already failing on main: known, and with ``fail-on: new`` the report passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.gha.act_harness import run_act
from tests.e2e.gha.test_act_pytest import (
    INJECTED,
    INJECTED_ID,
    act,
    demo_files,
    example_workflow,
    make_repo,
    report,
    wheels,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
__all__ = ["act", "wheels"]  # fixtures shared with the other act tests


def test_the_injected_failure_is_new_then_known(act: str, wheels: Path, tmp_path: Path) -> None:
    workflow = example_workflow()
    aggregate = next(s for s in workflow["jobs"]["report"]["steps"] if s.get("with", {}).get("command") == "aggregate")
    aggregate["with"]["fail-on"] = "new"
    failing = "def test_injected_failure():\n    assert 6 * 7 == 41\n"
    repo = make_repo(tmp_path / "repo", workflow, demo_files({INJECTED: failing}))

    first = run_act(act, repo, tmp_path / "first", wheels)
    print(f"first act run took {first.seconds:.1f}s; log in {tmp_path / 'first' / 'act.log'}")
    assert first.job_results().get("report") == "failed", first.log[-3000:]
    summary = (report(first) / "summary.md").read_text()
    assert "### 🆕 New failures (1)" in summary and "No test history of main to compare with yet" in summary
    assert "test_injected_failure" in summary.split("### 🆕 New failures (1)")[1].split("###")[0]

    second = run_act(act, repo, tmp_path / "second", wheels, caches_of=first)
    print(f"second act run took {second.seconds:.1f}s; log in {tmp_path / 'second' / 'act.log'}")
    summary = (report(second) / "summary.md").read_text()
    assert "### 📌 Known failures (1): not failing this build (--fail-on new)" in summary, summary[:3000]
    known = summary.split("### 📌 Known failures (1)")[1].split("###")[0]
    assert "test_injected_failure" in known and "failing on main since" in known
    assert "New failures" not in summary
    assert second.job_results().get("report") == "succeeded", second.log[-3000:]
    assert INJECTED_ID.endswith("test_injected_failure")
