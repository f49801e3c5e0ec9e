"""A minimal stand-in planner for ``ci-shards local`` until the plan stage lands on main.

Used only when ``ci_shards.commands.plan`` has no ``add_plan_options``/``plan_from_options``: collects
node ids with ``pytest --collect-only -q`` (or takes the durations file's keys), estimates unknown
tests with the median of the known ones, and balances by longest-processing-time-first.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ci_shards.errors import CollectionError, InputError, UsageError
from ci_shards.model import Granularity, Plan, ShardPlan


def add_fallback_plan_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shards", type=int, default=2, help="number of shards (default: 2)")
    parser.add_argument("--durations", type=Path, default=None, help="pytest-split .test_durations (default: none)")


def _durations(path: Path | None) -> dict[str, float]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read durations: {err}") from None
    if isinstance(data, list):
        data = dict(data)
    return {str(k): float(v) for k, v in data.items()}


def _collect(pytest_args: Sequence[str], cwd: Path) -> list[str]:
    argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *pytest_args]
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 5):
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise CollectionError("pytest --collect-only failed: " + " | ".join(tail))
    return [line.strip() for line in proc.stdout.splitlines() if "::" in line and not line.startswith(" ")]


def fallback_plan(args: argparse.Namespace, *, cwd: Path, pytest_args: list[str] | None) -> Plan:
    if args.shards < 1:
        msg = "--shards must be at least 1"
        raise UsageError(msg)
    durations = _durations(args.durations)
    items = _collect(pytest_args, cwd) if pytest_args is not None else sorted(durations)
    if not items:
        msg = "no items: nothing was collected and no --durations file names any"
        raise UsageError(msg)
    known = [durations[i] for i in items if i in durations]
    default = statistics.median(known) if known else 1.0
    estimate = {i: durations.get(i, default) for i in items}
    loads = [0.0] * args.shards
    members: list[list[str]] = [[] for _ in range(args.shards)]
    for item in sorted(items, key=lambda i: (-estimate[i], i)):
        target = min(range(args.shards), key=lambda s: (loads[s], s))
        loads[target] += estimate[item]
        members[target].append(item)
    order = {item: n for n, item in enumerate(items)}
    shards = tuple(
        ShardPlan(index=s + 1, items=tuple(sorted(members[s], key=order.__getitem__)), estimated_seconds=loads[s])
        for s in range(args.shards)
    )
    return Plan(
        total=args.shards,
        granularity=Granularity.TEST,
        shards=shards,
        lower_bound_seconds=max(sum(estimate.values()) / args.shards, *estimate.values()),
        unknown_items=len(items) - len(known),
    )
