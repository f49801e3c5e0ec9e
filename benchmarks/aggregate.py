"""Merge speed and peak memory of the aggregate stage, next to junitparser in the same run.

    .venv/bin/python benchmarks/aggregate.py            # both scenarios, every method
    .venv/bin/python benchmarks/aggregate.py --quick    # skip the slow naive junitparser loop

Scenarios (synthetic pytest-style JUnit, 1 in 50 cases failing with a 20-line trace):
- ``300x200``: 300 JUnit files of 200 cases (``ci-shards junit merge``);
- ``200x500``: 200 shard folders of 500 cases (``ci-shards aggregate``: read, check, merge, render).

Methods, each in a fresh subprocess so peak RSS (``ru_maxrss``) is its own:
- ``ours``: ``read_many`` + ``write_junit_suites`` (what ``junit merge`` runs);
- ``ours-aggregate``: ``aggregate_dirs`` (read folders, check against the plan) + merged JUnit + job
  summary: the whole ``ci-shards aggregate`` (200x500 only);
- ``ours-junitparser-writer``: ``read_many`` as ``ours``, the merged file built from
  ``junitparser.xunit2`` objects instead of streamed as text (would the writer be as fast through
  junitparser?);
- ``junitparser-append``: one ``JUnitXml``, suites appended, ``update_statistics()`` once (the fast
  way to use junitparser, as its maintainers advise for big merges);
- ``junitparser-naive``: ``xml += JUnitXml.fromfile(f)`` in a loop, the README's way (quadratic).
Fast methods run ``--repeat`` times (median shown); the naive loop once. Prints a Markdown table
with the date, machine and load, for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from junitparser import JUnitXml, xunit2
from junitparser import junitparser as jp

from ci_shards.junit import read_many, write_junit, write_junit_suites
from ci_shards.junit.read import clean_text
from ci_shards.model.outcome import CaseOutcome, CaseResult, Outcome, ShardStatus
from ci_shards.model.plan import Granularity, Plan, ShardPlan
from ci_shards.model.planfile import load_plan
from ci_shards.report.aggregate import aggregate_dirs
from ci_shards.report.outputs import write_merged_junit
from ci_shards.report.render import render_summary


def _cases(prefix: str, count: int) -> list[CaseResult]:
    trace = "".join(f"  File 'src/mod.py', line {n}, in f\n    x = g()\n" for n in range(10))
    return [
        CaseResult(
            test_id=f"tests/{prefix}/test_m.py::TestK::test_{j}",
            name=f"test_{j}",
            classname=f"tests.{prefix}.test_m.TestK",
            file=f"tests/{prefix}/test_m.py",
            time=0.001 * (j % 97),
            outcome=CaseOutcome.FAILED if j % 50 == 0 else CaseOutcome.PASSED,
            message="assert 1 == 2" if j % 50 == 0 else "",
            text=trace if j % 50 == 0 else "",
        )
        for j in range(count)
    ]


def make_files(root: Path, files: int, cases: int) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(files):
        path = root / f"junit-{i:03d}.xml"
        write_junit(_cases(f"p{i}", cases), path, suite_name=f"suite-{i}")
        paths.append(path)
    return paths


def make_shards(root: Path, shards: int, cases: int) -> Path:
    per_shard = [_cases(f"p{i}", cases) for i in range(1, shards + 1)]
    plan = Plan(
        total=shards,
        granularity=Granularity.TEST,
        shards=tuple(
            ShardPlan(index=i, items=tuple(c.test_id for c in group), estimated_seconds=10.0)
            for i, group in enumerate(per_shard, 1)
        ),
        lower_bound_seconds=9.0,
        unknown_items=0,
    )
    root.mkdir(parents=True, exist_ok=True)
    (root / "plan.json").write_text(plan.dumps())
    for i, group in enumerate(per_shard, 1):
        folder = root / "results" / f"ci-shards-shard-{i}-of-{shards}-a1" / f"shard-{i}-of-{shards}"
        folder.mkdir(parents=True)
        outcome = Outcome(
            plan_digest=plan.digest,
            shard_index=i,
            shard_total=shards,
            status=ShardStatus.FAILED,
            elapsed_seconds=10.0,
            planned_items=len(group),
            executed_tests=len(group),
        )
        (folder / "outcome.json").write_text(outcome.dumps())
        write_junit(group, folder / "junit.xml", suite_name=f"shard-{i}")
    return root


# --------------------------------------------------------------------------------------------
# the measured methods (run in a child process)


def run_ours(inputs: list[Path], out: Path) -> int:
    suites, errors = read_many(inputs)
    assert not errors
    write_junit_suites(suites, out)
    return sum(len(c) for _n, c in suites)


def _xunit2_case(case: CaseResult) -> xunit2.TestCase:
    """What ``junit._case_xml`` writes, as junitparser objects."""
    element = xunit2.TestCase(case.name, case.classname, round(case.time, 3))
    if case.file:
        element._elem.set("file", case.file)  # xunit2.TestCase has no ``file`` Attr
    if case.outcome is not CaseOutcome.PASSED:
        kind = {CaseOutcome.FAILED: jp.Failure, CaseOutcome.ERROR: jp.Error, CaseOutcome.SKIPPED: jp.Skipped}
        result = kind[case.outcome](clean_text(case.message, 4096), case.type or None)
        result.text = clean_text(case.text) or None
        element.result = [result]
    for attempt in case.attempts:
        flaky = case.outcome is CaseOutcome.PASSED
        failed = attempt.outcome is CaseOutcome.FAILED
        interim = (xunit2.FlakyFailure if failed else xunit2.FlakyError) if flaky else None
        interim = interim or (xunit2.RerunFailure if failed else xunit2.RerunError)
        entry = interim(clean_text(attempt.message, 4096), attempt.type or None)
        entry.stack_trace = clean_text(attempt.text)
        element.add_interim_result(entry)
    if case.system_out:
        element.system_out = clean_text(case.system_out)
    return element


def run_ours_junitparser_writer(inputs: list[Path], out: Path) -> int:
    suites, errors = read_many(inputs)
    assert not errors
    merged = xunit2.JUnitXml("ci-shards")
    tests = 0
    for name, cases in suites:
        suite = xunit2.TestSuite(name)
        for case in cases:
            suite._add_testcase_no_update_stats(_xunit2_case(case))
        suite.tests = len(cases)  # counted from the cases, as write_junit_suites does
        suite.failures = sum(c.outcome is CaseOutcome.FAILED for c in cases)
        suite.errors = sum(c.outcome is CaseOutcome.ERROR for c in cases)
        suite.skipped = sum(c.outcome is CaseOutcome.SKIPPED for c in cases)
        suite.time = round(sum(c.time for c in cases), 3)
        merged._elem.append(suite._elem)  # add_testsuite compares with every suite already there
        tests += len(cases)
    merged.tests = tests
    merged.write(str(out))
    return tests


def run_ours_aggregate(root: Path, out: Path) -> int:
    verdict = aggregate_dirs(load_plan(root / "plan.json"), [root / "results"])
    write_merged_junit(verdict, out)
    (out.parent / "summary.md").write_text(render_summary(verdict))
    return verdict.totals.tests


def run_junitparser_append(inputs: list[Path], out: Path) -> int:
    merged = JUnitXml()
    for path in inputs:
        for suite in JUnitXml.fromfile(str(path)):
            merged._elem.append(suite._elem)
    merged.update_statistics()
    merged.write(str(out))
    return int(merged.tests)


def run_junitparser_naive(inputs: list[Path], out: Path) -> int:
    merged = JUnitXml()
    for path in inputs:
        merged += JUnitXml.fromfile(str(path))
    merged.write(str(out))
    return int(merged.tests)


def child(method: str, target: str, out: str) -> None:
    root = Path(target)
    inputs = sorted(root.glob("*.xml")) or sorted((root / "results").glob("*/*/junit.xml"))
    start = time.perf_counter()
    if method == "ours":
        tests = run_ours(inputs, Path(out))
    elif method == "ours-junitparser-writer":
        tests = run_ours_junitparser_writer(inputs, Path(out))
    elif method == "ours-aggregate":
        tests = run_ours_aggregate(root, Path(out))
    elif method == "junitparser-append":
        tests = run_junitparser_append(inputs, Path(out))
    else:
        tests = run_junitparser_naive(inputs, Path(out))
    seconds = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "peak_mib": peak_kib / 1024, "tests": tests}))


def measure(method: str, target: Path, timeout: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [sys.executable, __file__, "--child", method, str(target), str(Path(tmp) / "merged.xml")],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
    result: dict[str, object] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="skip junitparser-naive (default: run it)")
    parser.add_argument("--timeout", type=float, default=900, help="per measurement, seconds (default: 900)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per fast method, median shown (default: 3)")
    parser.add_argument("--child", nargs=3, metavar=("METHOD", "TARGET", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    lxml = "lxml" if _has_lxml() else "expat"
    print(f"date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")
    cpus = f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    python = f"Python {platform.python_version()}"
    print(f"machine: {platform.platform()}, {cpus}, {python}, ci-shards' reader on expat, junitparser on {lxml}")
    print()
    print("| scenario | method | tests | time (s) | peak RSS (MiB) |")
    print("|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        files = Path(tmp) / "300x200"
        make_files(files, 300, 200)
        shards = make_shards(Path(tmp) / "200x500", 200, 500)
        plan = [
            (
                "300 files × 200 cases",
                files,
                ["ours", "ours-junitparser-writer", "junitparser-append", "junitparser-naive"],
            ),
            (
                "200 shards × 500 cases",
                shards,
                ["ours", "ours-junitparser-writer", "ours-aggregate", "junitparser-append", "junitparser-naive"],
            ),
        ]
        for label, target, methods in plan:
            for method in methods:
                if args.quick and method == "junitparser-naive":
                    continue
                repeat = 1 if method == "junitparser-naive" else args.repeat
                try:
                    runs = [measure(method, target, args.timeout) for _ in range(repeat)]
                    # the median run (by time): a shared CI machine is noisy
                    r = sorted(runs, key=lambda x: float(str(x.get("seconds", 0))))[len(runs) // 2]
                except subprocess.TimeoutExpired:
                    print(f"| {label} | {method} | – | > {args.timeout:.0f} | – |")
                    continue
                if "error" in r:
                    print(f"| {label} | {method} | error: {r['error']} | | |")
                else:
                    print(f"| {label} | {method} | {r['tests']} | {r['seconds']:.2f} | {r['peak_mib']:.0f} |")
                sys.stdout.flush()
    return 0


def _has_lxml() -> bool:
    try:
        import lxml  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(main())
