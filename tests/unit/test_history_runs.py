"""The test history across several simulated runs: real ``ci-shards aggregate`` processes over shard
folders written by the runner's own writers, one real timings store carried from run to run, a real
git repository for the ancestry checks.

The story: main passes (run 1), then B breaks on main (run 2: new). A PR on top fails on B (known,
since run 2) and on C (new); with ``--fail-on new`` only C fails the build. D fails once on a commit
it passed on (flaky). Then: an expired quarantine entry, a quarantined failure, an old base, a base
result from a commit that is not an ancestor.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ci_shards.history.outcomes import SECTION, format_date
from ci_shards.model.outcome import CaseOutcome
from ci_shards.model.plan import Plan
from ci_shards.timings.store import load_timings
from tests.unit.aggregate_fixtures import case_for, make_plan, write_shard

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CLI = [sys.executable, "-m", "ci_shards"]
A, B, C, D = (f"tests/test_{n}.py::test_{n}" for n in "abcd")
ITEMS = [[A, B], [C, D]]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@dataclass
class Repo:
    """A git repository: main c1 → c2 → c3 (the PR's commit), and a side commit not in c3's past."""

    root: Path
    plan: Plan
    plan_path: Path
    store: Path
    commits: dict[str, str]
    runs: int = 0

    def aggregate(
        self,
        failing: Sequence[str],
        *,
        commit: str,
        branch: str = "main",
        base: str = "",
        flags: Sequence[str] = (),
    ) -> tuple[int, dict, str]:
        """One CI run: shard folders where ``failing`` fail, then ``ci-shards aggregate``.
        Returns its exit code, verdict JSON and summary."""
        self.runs += 1
        shards = self.root / f"run-{self.runs}"
        for shard in self.plan.shards:
            cases = [
                case_for(t, CaseOutcome.FAILED if t in failing else CaseOutcome.PASSED, time=1.0) for t in shard.items
            ]
            write_shard(shards, self.plan, shard.index, cases)
        event = self.root / "event.json"
        event.write_text(json.dumps({"repository": {"default_branch": "main"}}), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI"))}
        env |= {
            "GITHUB_SHA": self.commits[commit],
            "GITHUB_REF_NAME": branch if not base else "7/merge",
            "GITHUB_HEAD_REF": branch if base else "",
            "GITHUB_BASE_REF": base,
            "GITHUB_RUN_ID": str(100 + self.runs),
            "GITHUB_EVENT_PATH": str(event),
        }
        summary = shards / "summary.md"
        done = subprocess.run(
            [*CLI, "aggregate", "--plan", str(self.plan_path), str(shards), "--format", "json",
             "--summary", str(summary), "--timings-out", str(self.store), *flags],
            cwd=self.root, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        return done.returncode, json.loads(done.stdout), summary.read_text(encoding="utf-8")

    def age_history(self, days: int) -> None:
        """Make every recorded run ``days`` older (time passing without a run on main)."""
        data = json.loads(self.store.read_text(encoding="utf-8"))
        for run in data[SECTION]["runs"]:
            when = datetime.strptime(run["date"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
            run["date"] = format_date(when - timedelta(days=days))
        self.store.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "t@example.com")
    _git(root, "config", "user.name", "t")
    commits = {}
    for name in ("c1", "c2", "c3"):
        _git(root, "commit", "-q", "--allow-empty", "-m", name)
        commits[name] = _git(root, "rev-parse", "HEAD")
    _git(root, "checkout", "-q", "-b", "side", commits["c1"])
    _git(root, "commit", "-q", "--allow-empty", "-m", "side")
    commits["side"] = _git(root, "rev-parse", "HEAD")
    _git(root, "checkout", "-q", commits["c3"])  # the PR's checkout
    plan = make_plan(ITEMS)
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(plan.dumps(), encoding="utf-8")
    return Repo(root=root, plan=plan, plan_path=plan_path, store=tmp_path / "cache" / "timings.json", commits=commits)


def _classes(verdict: dict) -> dict[str, str]:
    return {f["test_id"]: f["class"] for f in verdict["triage"]["failures"]}


def test_new_then_known_and_fail_on_new_passes_only_known_failures(repo: Repo) -> None:
    code, verdict, _ = repo.aggregate([], commit="c1")
    assert code == 0
    code, verdict, summary = repo.aggregate([B], commit="c2")
    assert (code, _classes(verdict)) == (1, {B: "new"})
    assert f"passed on main at {repo.commits['c1'][:10]}" in verdict["triage"]["failures"][0]["why"]
    assert "### 🆕 New failures (1)" in summary
    # the PR: B is already failing on main (known, since run 2 at c2); C is new
    pr = {"commit": "c3", "branch": "feature", "base": "main"}
    code, verdict, summary = repo.aggregate([B, C], **pr, flags=["--fail-on", "new"])
    assert (code, _classes(verdict)) == (1, {C: "new", B: "known"})
    known = verdict["triage"]["failures"][1]["why"]
    assert known.startswith(f"failing on main since {repo.commits['c2'][:10]}") and "run 102.1" in known
    # the triage sections lead; the full failure list ("### ❌ 2 tests failed": the headings now count) follows them
    assert summary.index("New failures") < summary.index("Known failures") < summary.index("### ❌ 2 tests failed")
    # C only fails the run, and shard 2 (C's) is the only one that did not pass; shard 1 failed only by B
    tests_failed, shards_failed = verdict["reasons"]
    assert tests_failed.startswith("1 ") and "(#2 failed)" in shards_failed and "#1" not in shards_failed
    # the PR fixed C: only the known failure is left
    code, verdict, summary = repo.aggregate([B], commit="c3", branch="feature", base="main", flags=["--fail-on", "new"])
    assert (code, _classes(verdict), verdict["passed"]) == (0, {B: "known"}, True)
    assert "### 📌 Known failures (1): not failing this build (--fail-on new)" in summary
    code, verdict, _ = repo.aggregate([B], commit="c3", branch="feature", base="main", flags=["--fail-on", "any"])
    assert (code, _classes(verdict)) == (1, {B: "known"})
    # PR runs were not recorded: the history holds main's two runs only
    assert [r["branch"] for r in json.loads(repo.store.read_text())[SECTION]["runs"]] == ["main", "main"]


def test_a_failure_on_a_commit_it_passed_on_is_flaky(repo: Repo) -> None:
    repo.aggregate([], commit="c1")
    repo.aggregate([], commit="c2")
    code, verdict, _ = repo.aggregate([D], commit="c2", flags=["--fail-on", "new"])  # a re-run of c2 on main
    assert (code, _classes(verdict)) == (0, {D: "flaky"})
    assert verdict["triage"]["failures"][0]["why"] == "passed on this same commit in an earlier run"
    # the PR: D fails again; its history (failed on c2 where it also passed) puts it over the flaky rate
    code, verdict, summary = repo.aggregate([D], commit="c3", branch="f", base="main", flags=["--fail-on", "new"])
    assert (code, _classes(verdict)) == (0, {D: "flaky"})
    assert verdict["triage"]["flaky_rates"][0] == {"test_id": D, "flaky_runs": 1, "runs": 4}
    assert "📈 Flaky rates (top 1)" in summary and "consider a `quarantine:` entry" in summary
    code, _, _ = repo.aggregate([D], commit="c3", branch="f", base="main", flags=["--fail-on", "any"])
    assert code == 1


def test_quarantine_excuses_and_an_expired_entry_fails_naming_it(repo: Repo) -> None:
    (repo.root / "ci-shards.yml").write_text(
        f"quarantine:\n"
        f"  - test: 'tests/test_c.py::*'\n    reason: races the port allocator (#12)\n    expires: 2999-01-01\n"
        f"  - test: {A}\n    reason: old problem\n    expires: 2020-01-31\n",
        encoding="utf-8",
    )
    code, verdict, summary = repo.aggregate([C], commit="c1")
    assert _classes(verdict) == {C: "quarantined"}
    assert [q["test_id"] for q in verdict["triage"]["quarantined"]] == [C]
    # C's failure is excused, but the expired entry fails the verdict and says which it is
    assert code == 1
    (reason,) = verdict["reasons"]
    assert reason.startswith(f"quarantine entry '{A}' in ci-shards.yml expired on 2020-01-31")
    assert "### ⌛ Expired quarantine entries" in summary
    assert "### 🚧 Quarantined tests (1 ran, 1 failed)" in summary
    (repo.root / "ci-shards.yml").write_text(
        "quarantine:\n  - test: 'tests/test_c.py::*'\n    reason: races the port allocator (#12)\n", encoding="utf-8"
    )
    code, verdict, _ = repo.aggregate([C], commit="c1")
    assert (code, verdict["passed"]) == (0, True)  # quarantined failures pass under the default --fail-on any


def test_an_old_base_never_makes_a_failure_known(repo: Repo) -> None:
    repo.aggregate([B], commit="c2")
    repo.age_history(30)
    code, verdict, _ = repo.aggregate([B], commit="c3", branch="f", base="main", flags=["--fail-on", "new"])
    assert (code, _classes(verdict)) == (1, {B: "new"})
    assert "is older than 14 days" in verdict["triage"]["failures"][0]["why"]
    code, verdict, _ = repo.aggregate(
        [B], commit="c3", branch="f", base="main", flags=["--fail-on", "new", "--max-base-age", "60"]
    )
    assert (code, _classes(verdict)) == (0, {B: "known"})


def test_a_base_result_from_a_non_ancestor_commit_never_makes_a_failure_known(repo: Repo) -> None:
    repo.aggregate([B], commit="side", flags=["--record-history"])  # recorded as main, but off c3's history
    code, verdict, _ = repo.aggregate([B], commit="c3", branch="f", base="main", flags=["--fail-on", "new"])
    assert (code, _classes(verdict)) == (1, {B: "new"})
    assert "not an ancestor" in verdict["triage"]["failures"][0]["why"]


def test_old_stores_read_and_the_history_rides_along_with_the_timings(repo: Repo) -> None:
    repo.store.parent.mkdir(parents=True)
    repo.store.write_text('{"schema": "ci-shards/timings@1", "history": 5, "variants": {"": {"x": [2.0]}}}')
    code, verdict, _ = repo.aggregate([B], commit="c1")
    assert (code, _classes(verdict)) == (1, {B: "new"})
    data = json.loads(repo.store.read_text())
    assert data[SECTION]["tests"] == {A: "p", B: "f", C: "p", D: "p"}
    assert load_timings(repo.store).estimates()["x"] == 2.0  # the timings keep their meaning
    # a PR run (not recorded) writes the timings back and keeps main's history untouched
    repo.aggregate([], commit="c3", branch="f", base="main")
    assert json.loads(repo.store.read_text())[SECTION] == data[SECTION]
