"""A sweep over a corpus of real JUnit reports and duration files from public repositories (by hand; not in
the test suite). The table and the findings go to docs/benchmarks.md ("A corpus of real files").

    .venv/bin/python benchmarks/corpus.py --corpus /tmp/corpus [--work /tmp/ci-shards-corpus] [--jobs 2]
        [--only TEXT] [--json-out FILE]

The corpus folder holds ``junit/``, ``durations/`` and a manifest of each (``junit-manifest.json``,
``durations-manifest.json``: file, repo, path, commit), gathered from the repositories' snapshots; it
stays outside the repository. Every file is run through the CLI as a user would, one process per command:

- JUnit: ``junit merge FILE -o merged.xml``; ``junit summary --format json FILE``; and the whole flow of a
  foreign report: ``plan --items`` (the test ids ci-shards reads from the file) ``--shards 1``, ``run
  --shard 1/1 -- cp FILE {junit}`` (a command that writes that report), ``aggregate --format json
  --summary summary.md --junit-out out.xml`` on GitHub (``GITHUB_ACTIONS=true``, so annotations are
  written). Checked: exit 0/1/2 only, never a traceback; exit 2 ends stderr with ``ci-shards: `` naming
  the file; no stdout line starts with ``::``, and no stderr line does but ci-shards' own annotations
  and fences; the counts (tests, failures, errors, skipped) of summary and verdict equal junitparser's
  reading of the file, or differ for a reason in ``KNOWN_DIFFERENCES``.
  The report is also read as a timings file (``plan --from-timings --durations FILE --shards 4``): every test
  it names in exactly one shard.
- Durations: ``plan --from-timings --durations FILE --shards 4 --format json``. Checked: exit 0, or exit 2
  with one line naming the file; every entry of the file in exactly one shard (by itself or an item that
  owns it); the slowest shard within the total / 4 plus the biggest item.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import junitparser

from ci_shards.junit.read import parse_junit
from ci_shards.model.matching import item_candidates

CLI = [sys.executable, "-m", "ci_shards"]
OWN_TRACEBACK = re.compile(r'^\s*File "[^"]*[/\\]ci_shards[/\\]', re.M)  # a frame of ours: no test's message
OWN_COMMANDS = re.compile(r"^::(error|warning|notice)( [^:]*)?::|^::(group::|endgroup::|stop-commands::)")

# (producer, why): the producer's report, read the way pytest and the reporters read it, differs from
# junitparser's public API for a reason that is a rule (docs/aggregate.md), not a bug
KNOWN_DIFFERENCES = {
    "cases-under-testsuites": "junitparser never sees a <testcase> directly under <testsuites>",
    "multi-result": "a case with several result elements: junitparser counts each, ci-shards the most severe",
    "junitparser-failed": "junitparser could not read the file (ci-shards refused it too, or recovered it)",
    "disabled": 'a case that never ran by its attributes, no result element (googletest\'s status="notrun",'
    " tst's and Bazel's status=\"disabled\"): skipped, as the suite's disabled= counts it; junitparser: passed",
}


@dataclass
class Result:
    file: str
    kind: str
    producer: str = ""
    exits: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)


def cli(args: Sequence[str], work: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    done = subprocess.run(
        [*CLI, *args], check=False, cwd=work, capture_output=True, text=True, errors="replace", env=env, timeout=300
    )
    return done.returncode, done.stdout, done.stderr


def check_streams(result: Result, step: str, answer: tuple[int, str, str], named: str) -> None:
    """The properties every command keeps, whatever its input."""
    code, out, err = answer
    result.exits[step] = code
    if code not in (0, 1, 2):
        result.problems.append(f"{step}: exit {code}")
    if OWN_TRACEBACK.search(err) or OWN_TRACEBACK.search(out):  # a test's own traceback is its message
        result.problems.append(f"{step}: traceback")
    if code == 2:
        last = err.rstrip("\n").rsplit("\n", 1)[-1]
        if not last.startswith("ci-shards: ") or named not in last:
            result.problems.append(f"{step}: exit 2 without a last line naming {named}: {last[:200]!r}")
    if any(line.startswith("::") for line in out.splitlines()):
        result.problems.append(f"{step}: a stdout line starts with ::")
    fenced = False
    for line in err.splitlines():
        if line.startswith("::stop-commands::"):
            fenced = True
        elif fenced and line.startswith("::") and not line.startswith("::stop-commands"):
            fenced = not re.match(r"^::[0-9a-f-]{16,}::$", line)  # the fence's token resumes commands
        elif line.startswith("::") and not OWN_COMMANDS.match(line):
            result.problems.append(f"{step}: stderr line is a workflow command: {line[:120]!r}")


def never_ran(case: junitparser.TestCase) -> bool:
    """docs/aggregate.md's rule: attributes that say the case did not run, and no result element."""
    elem = case._elem
    return not case.result and (
        elem.get("status") in ("disabled", "notrun") or elem.get("result") in ("suppressed", "skipped")
    )


def oracle(path: Path) -> tuple[dict[str, int], list[str]]:
    """junitparser's reading: per case the most severe of its result elements (as pytest's own report has
    one), and the reasons its public API and a per-case count part ways on this file."""
    reasons: list[str] = []
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = [xml] if isinstance(xml, junitparser.TestSuite) else list(xml)
    counts = Counter[str]()
    for suite in suites:
        for case in suite:
            kinds = {type(r).__name__ for r in case.result}
            if len(case.result) > 1:
                reasons.append("multi-result")
            if never_ran(case):
                reasons.append("disabled")
            counts["tests"] += 1
            if "Error" in kinds:
                counts["errors"] += 1
            elif "Failure" in kinds:
                counts["failed"] += 1
            elif "Skipped" in kinds:
                counts["skipped"] += 1
    if not isinstance(xml, junitparser.TestSuite) and any(
        child.tag == "testcase"
        for child in xml._elem  # the oracle's own blind spot
    ):
        reasons.append("cases-under-testsuites")
    return {k: counts[k] for k in ("tests", "failed", "errors", "skipped")}, sorted(set(reasons))


def ours(totals: dict[str, Any]) -> dict[str, int]:
    """ci-shards' totals in the oracle's terms: xfailed is a skip, xpassed a pass, as JUnit writes them."""
    return {
        "tests": totals["tests"],
        "failed": totals["failed"],
        "errors": totals["errors"],
        "skipped": totals["skipped"] + totals.get("xfailed", 0),
    }


def compare(result: Result, step: str, got: dict[str, int], want: dict[str, int] | None, why: list[str]) -> None:
    if want is None or got == want:
        return
    diff = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    if why:
        result.notes.append(f"{step}: counts differ {diff} ({', '.join(why)})")
    else:
        result.problems.append(f"{step}: counts differ from junitparser's (ours, its): {diff}")


def sweep_junit(path: Path, work: Path, producer: str) -> Result:
    result = Result(file=path.name, kind="junit", producer=producer)
    work.mkdir(parents=True, exist_ok=True)
    want: dict[str, int] | None
    try:
        want, why = oracle(path)
    except Exception as err:  # the oracle's failure is a fact about the file, not ours
        want, why = None, ["junitparser-failed"]
        result.notes.append(f"junitparser: {type(err).__name__}: {str(err)[:120]}")
    result.counts["junitparser"] = want
    code, out, err = cli(["junit", "merge", str(path), "-o", str(work / "merged.xml")], work)
    check_streams(result, "merge", (code, out, err), path.name)
    if code == 0:
        merged = junitparser.JUnitXml.fromfile(str(work / "merged.xml"))  # our output must read back
        result.counts["merged_tests"] = sum(1 for suite in merged for _ in suite)
        check_identity(result, path, work / "merged.xml", "merge")
        code, out, err = cli(["junit", "summary", "--format", "json", "merged.xml"], work)
        check_streams(result, "summary of merged", (code, out, err), "merged.xml")
        result.counts["merged"] = ours(json.loads(out)) if code == 0 else None
    code, out, err = cli(["junit", "summary", "--format", "json", str(path)], work)
    check_streams(result, "summary", (code, out, err), path.name)
    if code == 0:
        totals = json.loads(out)
        result.counts["summary"] = ours(totals)
        compare(result, "summary", ours(totals), want, why)
        if "merged_tests" in result.counts and result.counts["merged_tests"] != totals["tests"]:
            result.problems.append(f"merge wrote {result.counts['merged_tests']} cases of {totals['tests']}")
        if result.counts.get("merged", ours(totals)) != ours(totals):
            result.problems.append(f"merged file reads back as {result.counts['merged']}, not {ours(totals)}")
        sweep_flow(path, work, result, want, why)
        sweep_as_timings(path, work, result)
    return result


def sweep_as_timings(path: Path, work: Path, result: Result) -> None:
    """The report as a timings file (``--durations`` reads JUnit): every test it names is in exactly one shard."""
    args = ["plan", "--from-timings", "--durations", str(path), "--shards", "4", "--format", "json"]
    code, out, err = cli(args, work)
    check_streams(result, "plan from the report", (code, out, err), path.name)
    if code != 0:
        return
    where = plan_items(json.loads(out))
    ids = test_ids(path)
    bad = {i: owners(i, where) for i in ids if len(owners(i, where)) != 1}
    if bad:
        result.problems.append(f"plan from the report: {len(bad)} of {len(ids)} tests not in 1 shard: {list(bad)[:3]}")


def test_ids(path: Path) -> list[str]:
    """The ids ci-shards reads from the report: what a plan of this suite lists (dict keeps one of each)."""
    return list(dict.fromkeys(case.test_id for case in parse_junit(path)))


def sweep_flow(path: Path, work: Path, result: Result, want: dict[str, int] | None, why: list[str]) -> None:
    """The real path of a foreign report: plan its tests, run a shard whose command writes the report,
    aggregate the shard folder with the summary and annotations."""
    read = test_ids(path)
    ids = [i for i in read if i.strip() and "\n" not in i and "\r" not in i]
    if read and not ids:  # cases without a name or class: a plan can only list something else (unverified)
        ids = ["unnamed"]
    empty = [] if ids else ["--allow-empty"]
    (work / "items.txt").write_text("".join(f"{i}\n" for i in ids))
    code, out, err = cli(["plan", "--items", "items.txt", "--shards", "1", "-o", "plan.json", *empty], work)
    check_streams(result, "plan", (code, out, err), "items.txt")
    if code not in (0, 1) or not (work / "plan.json").exists():
        return
    env = {**os.environ, "GITHUB_ACTIONS": "true", "CI": "true"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    run = ["run", "--plan", "plan.json", "--shard", "1/1", "--out", "results", "--no-live", *empty]
    code, out, err = cli([*run, "--", "cp", str(path), "{junit}"], work, env)
    check_streams(result, "run", (code, out, err), path.name)
    agg = ["aggregate", "--plan", "plan.json", "results", "--format", "json", "--summary", "summary.md"]
    code, out, err = cli([*agg, "--junit-out", "out.xml", *empty], work, env)
    check_streams(result, "aggregate", (code, out, err), path.name)
    if code in (0, 1):
        verdict = json.loads(out)
        result.counts["verdict"] = ours(verdict["totals"])
        compare(result, "aggregate", ours(verdict["totals"]), want, why)
        check_verdict(result, verdict, unnamed=ids == ["unnamed"])
        check_summary(result, work / "summary.md")
        check_identity(result, path, work / "out.xml", "aggregate --junit-out")


def check_verdict(result: Result, verdict: dict[str, Any], *, unnamed: bool) -> None:
    """The plan lists exactly the ids read from the report, so the accounting is clean, and the verdict
    passes exactly when no test failed and one executed."""
    accounting = verdict["accounting"]
    broken = {k: accounting[k] for k in ("missing", "duplicated", "unplanned", "unverified_shards") if accounting[k]}
    if broken and not unnamed:
        result.problems.append(f"aggregate: accounting not clean for the report's own ids: {str(broken)[:300]}")
    totals = verdict["totals"]
    should_pass = not (totals["failed"] or totals["errors"]) and totals["tests"] > totals["skipped"] + totals["xfailed"]
    if verdict["passed"] != (should_pass and not unnamed) and totals["tests"]:
        result.problems.append(f"aggregate: passed={verdict['passed']} with totals {totals} ({verdict['reasons'][:2]})")


def identities(path: Path) -> list[tuple[str, str, str]]:
    """(classname, name, outcome) of every case, as junitparser reads them, sorted."""
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = [xml] if isinstance(xml, junitparser.TestSuite) else list(xml)
    found = []
    for suite in suites:
        for case in suite:
            kinds = {type(r).__name__ for r in case.result}
            outcome = next((k for k in ("Error", "Failure", "Skipped") if k in kinds), "")
            if never_ran(case):  # KNOWN_DIFFERENCES["disabled"]
                outcome = "Skipped"
            found.append((case.classname or "", case.name or "", outcome))
    return sorted(found)


def check_identity(result: Result, original: Path, written: Path, step: str) -> None:
    """What ci-shards writes keeps every case's classname, name and outcome (docs/aggregate.md)."""
    try:
        want = identities(original)
    except Exception:  # junitparser cannot read the original: nothing to compare with
        return
    got = identities(written)
    if got != want:
        lost, added = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        result.problems.append(f"{step}: cases differ: lost {lost[:3]} added {added[:3]} ({len(want)} vs {len(got)})")


def check_summary(result: Result, summary: Path) -> None:
    if not summary.is_file() or not summary.read_text().strip():
        result.problems.append("aggregate: no summary written")
        return
    text = summary.read_text()
    if re.search(r"<(script|img|iframe)\b", text, re.I):
        result.problems.append("summary: raw HTML from the report")


def plan_items(plan: dict[str, Any]) -> dict[str, list[int]]:
    where: dict[str, list[int]] = {}
    for shard in plan["shards"]:
        for item in shard["items"]:
            where.setdefault(item, []).append(shard["index"])
    return where


def owners(key: str, where: dict[str, list[int]]) -> list[int]:
    """The shards whose items own a timing's id: the id itself or a prefix pytest extends (file, class)."""
    return sorted(s for c in item_candidates(key) for s in where.get(c, []))


def sweep_durations(path: Path, work: Path) -> Result:
    producer = "pytest-split" if path.name.endswith(".test_durations") else "json (pytest-split's format)"
    result = Result(file=path.name, kind="durations", producer=producer)
    work.mkdir(parents=True, exist_ok=True)
    args = ["plan", "--from-timings", "--durations", str(path), "--shards", "4", "--format", "json"]
    code, out, err = cli(args, work)
    check_streams(result, "plan", (code, out, err), path.name)
    if code == 2 and len(err.strip().splitlines()) != 1:
        result.problems.append(f"plan: exit 2 with {len(err.strip().splitlines())} lines")
    if code != 0:
        result.notes.append(f"plan exit {code}: {err.strip()[-200:]}")
        return result
    plan = json.loads(out)
    data = json.loads(path.read_text())
    entries = dict(data) if isinstance(data, dict) else {k: v for k, v in data}
    where = plan_items(plan)
    bad = {k: owners(k, where) for k in entries if len(owners(k, where)) != 1}
    if bad:
        sample = list(bad.items())[:3]
        result.problems.append(f"{len(bad)} of {len(entries)} entries not in exactly one shard, e.g. {sample}")
    check_balance(result, plan, entries)
    return result


def check_balance(result: Result, plan: dict[str, Any], entries: dict[str, Any]) -> None:
    estimates = [s["estimated_seconds"] for s in plan["shards"]]
    values = [float(v) for v in entries.values() if isinstance(v, (int, float))]
    biggest = max(values, default=0.0)
    bound = sum(estimates) / len(estimates) + biggest
    result.counts.update(entries=len(entries), shards=estimates, biggest=biggest)
    if max(estimates) > bound * 1.001 + 0.01:
        result.problems.append(f"slowest shard {max(estimates):.2f} s over total/4 + biggest item {bound:.2f} s")


PRODUCERS = [  # (pattern on repo/path, producer): the first match names it
    (r"go-junit-report|gotestsum", "go (go-junit-report, gotestsum)"),
    (r"gtest", "googletest"),
    (r"nextest", "nextest"),
    (r"jest", "jest-junit"),
    (r"mocha", "mocha"),
    (r"pytest|python", "python (pytest, unittest)"),
    (r"phpunit|nette-tester", "php (phpunit, nette)"),
    (r"xcresult|swift", "xcode / swift"),
    (r"bazel", "bazel"),
    (r"catch2|cunit|/tst/", "c/c++ (catch2, cunit, tst)"),
    (r"scalatest|marathon|perl|container-structure", "other (scalatest, marathon, perl, container-structure-test)"),
    (r"surefire|failsafe|/TEST-[^/]*\.xml$", "surefire / ant (java)"),
    (r"xunit", "xunit"),
    (r"junit-plugin", "jenkins junit-plugin fixtures (ant, hand-written)"),
]


def producer_of(repo: str, path: str, head: str) -> str:
    """The producer, from where the file was published (case-sensitive ``TEST-``: Surefire's and Ant's names)."""
    where = f"{repo}/{path}".replace("/python/test/files/", "/")  # EnricoMi's folder of every producer
    for pattern, name in PRODUCERS:
        if re.search(pattern, where, 0 if "TEST-" in pattern else re.I):
            return name
    if "surefire" in head or "java.version" in head:
        return "surefire / ant (java)"
    return "reporters' own fixtures (generic JUnit)"


def load_manifest(corpus: Path, kind: str) -> list[dict[str, Any]]:
    return list(json.loads((corpus / f"{kind}-manifest.json").read_text()))


def run_all(corpus: Path, work: Path, jobs: int, only: str) -> list[Result]:
    tasks: list[Any] = []
    for entry in load_manifest(corpus, "junit"):
        path = corpus / "junit" / entry["file"]
        head = path.read_bytes()[:2000].decode("utf-8", "replace")
        producer = producer_of(entry["repo"], entry["path"], head)
        tasks.append((sweep_junit, path, work / "junit" / entry["file"][:200], producer))
    for entry in load_manifest(corpus, "durations"):
        path = corpus / "durations" / entry["file"]
        tasks.append((sweep_durations, path, work / "durations" / entry["file"][:200]))
    tasks = [t for t in tasks if only in t[1].name]
    shutil.rmtree(work, ignore_errors=True)
    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(lambda t: t[0](*t[1:]), tasks))


def report(results: Iterable[Result]) -> None:
    results = list(results)
    for kind in ("junit", "durations"):
        mine = [r for r in results if r.kind == kind]
        by_producer = Counter(r.producer for r in mine)
        failing = Counter(r.producer for r in mine if r.problems)
        print(f"\n{kind}: {len(mine)} files, {sum(1 for r in mine if r.problems)} with a problem")
        for producer, n in by_producer.most_common():
            step = "summary" if kind == "junit" else "plan"
            exits = Counter(r.exits.get(step) for r in mine if r.producer == producer)
            print(f"  {producer:24} {n:4} files  exits {dict(exits)}  problems {failing[producer]}")
    for r in results:
        for line in r.problems:
            print(f"PROBLEM {r.file}: {line}")
    for r in results:
        for line in r.notes:
            print(f"note    {r.file}: {line}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/corpus"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/ci-shards-corpus"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    results = run_all(args.corpus, args.work, args.jobs, args.only)
    report(results)
    if args.json_out:
        args.json_out.write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 1 if any(r.problems for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
