"""Tests pytest-dependency skipped because the test they depend on ran on another shard (pure).

pytest-dependency skips a test whose dependency did not pass earlier in the same session ("test_b depends on
tests/test_a.py::test_a"). The plan keeps a file whose tests depend on one another whole (plan/dependencies.py), but a
dependency of scope ``session`` or ``package`` names another file's test, and that file may be planned on another
shard: there the dependency passes, here the dependent test is skipped, where plain pytest runs both. The run then
passes with a test that never ran, so the verdict names each such test and fails (docs/rules.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ci_shards.common.console import plural
from ci_shards.model.outcome import CaseOutcome, CaseResult

# pytest-dependency 0.6's skip (pytest_dependency.py, DependencyManager.checkDepend): "{item.name} depends on {name}",
# as pytest's report gives it ("Skipped: " first); a session-scope name is a node id, so it holds "::"
_DEPENDS_ON: Final = re.compile(r"^(?:Skipped: )?\S+ depends on (?P<dependency>\S+::\S+)$")


@dataclass(frozen=True)
class SplitDependency:
    test_id: str  # the skipped test
    shard: int  # its shard
    dependency: str  # the test it depends on
    ran_on: int  # the shard on which that one passed


def split_dependencies(shards: Sequence[tuple[int, Sequence[CaseResult]]]) -> list[SplitDependency]:
    """Each test skipped for a dependency that passed on another shard; ``shards``: (index, cases) of each."""
    passed_on = {case.test_id: index for index, cases in shards for case in cases if case.outcome is CaseOutcome.PASSED}
    found = []
    for index, cases in shards:
        for case in cases:
            match = _DEPENDS_ON.match(case.message) if case.outcome is CaseOutcome.SKIPPED else None
            ran_on = passed_on.get(match["dependency"]) if match else None
            if match and ran_on is not None and ran_on != index:
                found.append(SplitDependency(case.test_id, index, match["dependency"], ran_on))
    return found


def split_reason(found: Sequence[SplitDependency]) -> str:
    """The verdict's reason, "" when no test was skipped so."""
    if not found:
        return ""
    they = "it depends" if len(found) == 1 else "they depend"
    return (
        f"{plural(len(found), 'test')} skipped by pytest-dependency because the test {they} on passed on another"
        " shard (plain pytest runs them): join their files with --keep-together PATTERN"
    )


def split_notes(found: Sequence[SplitDependency]) -> list[str]:
    """One note per such test (the first five, then a count)."""
    notes = [
        f"did not run: {f.test_id} (shard {f.shard}) — it depends on {f.dependency}, which passed on shard {f.ran_on}"
        for f in found[:5]
    ]
    if len(found) > 5:
        notes.append(f"did not run: {len(found) - 5} more tests skipped the same way")
    return notes
