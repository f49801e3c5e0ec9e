"""Golden plans on the real duration files in tests/data/durations (trimmed copies, see tests/data/SOURCES.md).

Each case records the plan digest (which covers every shard's items), the slowest shard, the lower
bound and the files cut, in tests/data/plan_golden.json. A change of algorithm that changes plans
shows up here as a reviewed diff. Regenerate with:

    CI_SHARDS_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/unit/plan/test_planner_golden.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ci_shards.model.plan import Granularity
from ci_shards.plan.planner import fragmentation, plan_items
from ci_shards.timings.store import load_timings
from tests.unit.golden import regenerating

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "plan_golden.json"
CASES = [(g, n) for n in (2, 8, 32) for g in ("auto",)] + [("test", 4), ("file", 4)]


def _summaries(real_data: Path) -> dict[str, dict[str, object]]:
    result = {}
    for path in sorted((real_data / "durations").iterdir()):
        durations = load_timings(path).estimates()
        for granularity, n in CASES:
            plan = plan_items(durations, durations, n, granularity=Granularity(granularity))
            assert sorted(plan.items) == sorted(durations)
            assert all(s.items for s in plan.shards) or len(durations) < n or granularity == "file"
            ratio = plan.estimated_makespan / plan.lower_bound_seconds
            if granularity != "file":
                assert ratio <= 1.10, (path.name, n, ratio)
            result[f"{path.name} {granularity} {n}"] = {
                "digest": plan.digest,
                "makespan": round(plan.estimated_makespan, 3),
                "lower_bound": round(plan.lower_bound_seconds, 3),
                "files_cut": plan.files_cut,
                "fragmentation": round(fragmentation(plan), 3),
            }
    return result


def test_golden_plans(real_data):
    actual = _summaries(real_data)
    if regenerating():
        GOLDEN.write_text(json.dumps(actual, indent=1, sort_keys=True) + "\n")
    expected = json.loads(GOLDEN.read_text())
    assert actual.keys() == expected.keys()
    for key, value in expected.items():
        assert actual[key] == value, key


def test_auto_beats_both_references_on_real_files(real_data):
    """The issue's claim in miniature: near test-level balance with near file-level locality."""
    ratios, frags = [], []
    for path in sorted((real_data / "durations").iterdir()):
        durations = load_timings(path).estimates()
        for n in (4, 16):
            plan = plan_items(durations, durations, n)
            ratios.append(plan.estimated_makespan / plan.lower_bound_seconds)
            frags.append(fragmentation(plan))
    assert sum(ratios) / len(ratios) <= 1.01
    assert sum(frags) / len(frags) <= 1.40


@pytest.mark.parametrize("n", [3, 7])
def test_shuffled_real_input_gives_identical_bytes(real_data, n):
    durations = load_timings(real_data / "durations" / "sdss__marvin__tests__.test_durations").estimates()
    items = list(durations)
    random.Random(n).shuffle(items)
    a = plan_items(sorted(durations), durations, n).dumps()
    b = plan_items(items, dict(reversed(list(durations.items()))), n).dumps()
    assert a == b
