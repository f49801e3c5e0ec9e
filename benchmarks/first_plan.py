"""The first plan, before any timings exist: how balanced its shards really run (by hand; results in
docs/benchmarks.md).

    python benchmarks/first_plan.py [--venv /tmp/ci-shards-first-plan] [--suites attrs jinja2 click tomlkit]
        [--shards 4] [--repeat 1] [--json-out FILE]

Per suite (the tests of a PyPI sdist, run from the unpacked sdist's root as a checkout runs them,
against the same version installed in a throwaway venv with pytest, pytest-split and this checkout),
with no timings at all, three splits of the same tests into N shards:

- ci-shards ``plan --discover``: files found on disk, each estimated from the tests it defines
  (read with ``ast``), each file's classes and functions dealt over the shards (docs/planning.md, *The first
  plan: every file dealt*; planned whole before run 11);
- ci-shards ``plan --pytest``: pytest's collection, every collected test estimated alike, dealt the same way;
- pytest-split ``--splits N --group i`` with no durations file: its split by test count.

The discovered plan names a dealt file by its tests' node ids (issue 25: ``plan/cut_files.py``).
Beside the ratios, ``test_time_bound`` is the physics bound from the tests' own times in
pytest-split's JUnit (max(longest test, total/N) over total/N: more-itertools' one 33 s test of
70 s gives 1.89), which no plan of whole tests beats.

Every shard is then run, one after another (the machine has 2 shared cores: parallel shards would
time each other's load), the three tools alternating per shard index: ci-shards' shards as
``ci-shards run --plan … --pytest``, pytest-split's as ``pytest --splits N --group i``. A shard's
time is its whole process (start-up and collection included, as a CI job pays them), in wall and
in CPU seconds (user + sys of the process tree: robust to the other load). Reported per tool: the
slowest shard over the mean shard (target ≤ 1.3, and never above pytest-split's), the shards'
times, the tests each ran, and the plan's estimated seconds per shard (for discovery and
collection, which agree when the counts match pytest's). Every shard's pytest also loads
``first_plan_clock`` (this folder): the CPU of its tests and of its collection, apart from the start-up
every shard pays alike, so slowest/mean is also given by the tests' CPU (what the plan balanced), and the
bound from the tests' CPU in pytest-split's shards. With ``--repeat``, each round's figures are kept and
every ratio's median is given.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from e2e import CPU, ENV, REPO, sh  # same timing of a process tree (benchmarks/ is on sys.path when run)

PYTEST_OPTS = ["-p", "no:cacheprovider", "--rootdir=.", "-q"]
# every shard's pytest, of every tool, loads benchmarks/first_plan_clock.py: its tests' and collection's CPU
CLOCK_OPTS = ["-p", "first_plan_clock"]
BENCHMARKS = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Suite:
    name: str
    distribution: str  # the sdist (and the installed package) at this version
    version: str
    tests: str  # the test path inside the sdist
    packages: tuple[str, ...] = ()  # the suite's test dependencies
    args: tuple[str, ...] = ()  # pytest arguments every tool gets


SUITES = {
    s.name: s
    for s in (
        # attrs' conftest leaves test_forward_references.py out before Python 3.14 by a collect_ignore
        # computed under an ``if``, which discovery cannot read; named in a shard, the file inside the
        # tests package makes pytest stop with "not found" (exit 4) before the plugin can skip it, and
        # the shard's other files do not run: said here for every tool, so the shards measure tests
        Suite(
            "attrs",
            "attrs",
            "26.1.0",
            "tests",
            ("hypothesis", "pympler", "cloudpickle"),
            ("--ignore=tests/test_forward_references.py",),
        ),
        Suite("jinja2", "jinja2", "3.1.6", "tests", ("trio",)),
        Suite("click", "click", "8.5.1", "tests"),
        Suite("tomlkit", "tomlkit", "0.15.2", "tests"),
        # shapes the first four do not have: packaging's test_version.py holds 51,524 of its 64,207
        # tests and addopts deselect its hypothesis suite (-m 'not property'); more-itertools is two
        # files of unittest cases
        Suite("packaging", "packaging", "26.4", "tests", ("pretend", "tomli_w", "hypothesis")),
        Suite("more-itertools", "more_itertools", "11.2.1", "tests"),
        # issue 25, run 4: dateutil's tests hold @given tests (tests/property/) beside a data-driven
        # file whose two tests take 22-30 s (test_tzpath_data.py); toolz keeps its tests inside the
        # package (toolz/tests); boltons is 33 small files. dateutil needs pytest-cov: its conftest marks
        # xfail tests no_cover, a mark pytest-cov registers (else filterwarnings=error stops collection)
        Suite("dateutil", "python_dateutil", "4.0.0", "tests", ("hypothesis", "freezegun", "tzdata", "pytest-cov")),
        Suite("toolz", "toolz", "1.2.0", "toolz/tests"),
        Suite("boltons", "boltons", "26.2.0", "tests"),
        # issue 25, run 5: a suite of meaningful size (95 s of test CPU serially, longest test 7.8 s: bound 1.0
        # by test), tests inside the package; with numpy, without scipy, matplotlib or pandas, so 35 of its
        # 266 files skip at their module-level importorskip; test_special.py's 348 tests come from test classes
        # imported from three sibling modules
        Suite("networkx", "networkx", "3.6.1", "networkx", ("numpy",)),
        # 43 s of test CPU serially, longest test 0.58 s (bound 1.0); its benchmarks/ folder needs pytest-benchmark
        # (its `benchmark` fixture: 448 errors without it), left out for every tool
        Suite("pint", "pint", "0.25.3", "pint/testsuite", ("numpy",), ("--ignore=pint/testsuite/benchmarks",)),
        # issue 25, run 6: suites of 2-30 s of tests' CPU. pygments' tests/snippets/ and tests/examplefiles/
        # conftests collect their files (1,508 tests) through pytest_collect_file, which no reading of Python
        # files sees; its contrast test imports wcag_contrast_ratio
        Suite("pygments", "pygments", "2.21.0", "tests", ("wcag-contrast-ratio",)),
        # babel's tests/conftest.py parametrizes every test marked all_locales over all locales in
        # pytest_generate_tests (8,126 collected tests); its date tests run under pytz and zoneinfo alike
        Suite("babel", "babel", "2.19.0", "tests", ("freezegun", "pytz")),
        # parso's conftest.py parametrizes its data-file tests in pytest_generate_tests (1,986 collected)
        Suite("parso", "parso", "0.8.7", "test"),
        # marshmallow: 1,192 tests, 2 s of tests' CPU, counted within 10 % by discovery; two of its case ids hold
        # datetime.now(), so a --pytest plan's shard that holds them fails ("never reported"): the ids it runs
        # are not the ones the plan collected
        Suite("marshmallow", "marshmallow", "4.4.0", "tests", ("simplejson",)),
        # issue 25, run 7 (fp7), each figure the tests' CPU of a round's four shards: pyflakes keeps its tests inside
        # the package (pyflakes/test: 796 tests, 1.6-2.0 s), each a snippet checked through a shared harness class;
        # test_doctests.py runs three imported test classes again, each subclassed under its own imported name
        Suite("pyflakes", "pyflakes", "4.1.0", "pyflakes/test"),
        # sqlparse: 540 tests, 2.9-3.9 s, of which tests/test_dos_prevention.py's 8 tests are 42-50 %
        Suite("sqlparse", "sqlparse", "0.6.1", "tests"),
        # pyasn1: 1,261 unittest cases in 19 files over subpackages (tests/type, tests/codec, ...), 1.5-1.9 s
        Suite("pyasn1", "pyasn1", "0.6.5", "tests"),
        # docutils: 466 unittest cases holding 1,871 subtests (a parser or writer file's cases are subtests of one
        # test method), 5.0-6.6 s; 14 modules skip at import (no recommonmark). test/test_publisher.py fails 2 tests
        # when run without a file that loads docutils.writers.null first (it does not import it): alone, or in a shard
        Suite("docutils", "docutils", "0.23.1", "test"),
        # mako: 615 tests, 1.7-2.1 s; its python_files and python_classes ("*Test") are not pytest's defaults
        Suite("mako", "mako", "1.4.3", "test"),
        # humanize: 878 tests, 2.0-2.4 s; tests/test_benchmarks.py needs pytest-benchmark (its `benchmark` fixture:
        # 15 errors without it), left out for every tool
        Suite("humanize", "humanize", "4.17.0", "tests", ("freezegun",), ("--ignore=tests/test_benchmarks.py",)),
        # soupsieve: 750 tests, 27-33 s, one of them 11-15 s; each selector case runs under every HTML/XML parser that
        # imports (here html.parser only: without lxml and html5lib, 158 tests skip, as under every tool)
        Suite("soupsieve", "soupsieve", "4.1.4", "tests", ("beautifulsoup4",)),
        # Faker: 2,487 tests, 44-51 s, one of them 19-22 s; a file per provider under tests/providers; its
        # python_files is a path glob (tests/*.py). Its pytest plugin is kept out of the other suites (FOREIGN_PLUGINS)
        Suite(
            "faker",
            "faker",
            "40.63.0",
            "tests",
            ("freezegun", "python-stdnum", "ukpostcodeparser", "validators", "xmltodict"),
        ),
        # tabulate: 319 tests in 7 files, 1.4-1.6 s, 199 of them in test_output.py; with numpy and pandas in the venv
        # (sqlglot's) its numpy and pandas tests run; test_cli.py's 7 tests run its CLI in subprocesses, 1.0-1.4 s of
        # CPU that the tests' clock does not see
        Suite("tabulate", "tabulate", "0.10.0", "test"),
        # cachetools: 476 unittest cases in 12 files, 0.9-1.4 s, most of them from a mixin class of tests/__init__.py
        Suite("cachetools", "cachetools", "8.0.2", "tests"),
        # sqlglot: 1,504 unittest cases holding 23,372 subtests, a file per SQL dialect under tests/dialects,
        # 103-142 s, one test 38-50 s; tests/test_executor.py and test_optimizer.py need duckdb and pandas and run
        # ProcessPoolExecutor workers, 15-39 s of CPU in a shard that the tests' clock does not see
        Suite("sqlglot", "sqlglot", "30.31.0", "tests", ("duckdb", "pandas", "pytz")),
        # djangorestframework: 1,560 tests in 58 files under pytest-django (its tests/conftest.py configures the
        # settings), 19-22 s; a database set up per shard, and 40 unittest subtests
        Suite(
            "drf",
            "djangorestframework",
            "3.16.1",
            "tests",
            (
                "django<6",
                "pytest-django",
                "pytz",
                "inflection",
                "uritemplate",
                "coreapi",
                "coreschema",
                "markdown",
                "django-guardian",
                "psycopg2-binary",
                "pygments",
                "pyyaml",
            ),
        ),
    )
}
# pytest plugins that a suite's packages install into the shared venv, blocked (``-p no:NAME``) in every other
# suite's pytest, so one suite's plugin is not start-up that every suite pays: Faker's ``faker`` plugin
# imports faker in every pytest process (0.35 s of CPU, a third of a small shard's start-up)
FOREIGN_PLUGINS = {"faker": "faker", "drf": "django"}  # suite → its plugin's entry-point name


def pytest_opts(suite: Suite) -> list[str]:
    """``PYTEST_OPTS`` and the other suites' plugins blocked (``FOREIGN_PLUGINS``)."""
    blocked = [arg for name, plugin in FOREIGN_PLUGINS.items() if name != suite.name for arg in ("-p", f"no:{plugin}")]
    return [*PYTEST_OPTS, *blocked]


TOOLS = ("discover", "collect", "pytest-split")


def ensure_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # every time: a venv made before a suite was added gets it (pins already met cost no download)
    packages = ["pytest", "pytest-split", *(f"{s.distribution}=={s.version}" for s in SUITES.values())]
    packages += sorted({p for s in SUITES.values() for p in s.packages})
    subprocess.run([str(python), "-m", "pip", "install", "-q", *packages], check=True)
    # every time too: a venv kept from another checkout (a before/after comparison) measures this one
    subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(REPO)], check=True)
    return python


def unpacked(python: Path, suite: Suite, work: Path) -> Path:
    root = work / f"{suite.distribution}-{suite.version}"
    if not root.is_dir():
        download = [str(python), "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*download, f"{suite.distribution}=={suite.version}", "-d", str(work)], check=True)
        archive = next(work.glob(f"{suite.distribution.replace('-', '_')}-{suite.version}.tar.gz"), None)
        archive = archive or work / f"{suite.distribution}-{suite.version}.tar.gz"
        with tarfile.open(archive) as tar:
            tar.extractall(work, filter="data")
    return root


def plan(python: Path, how: str, *, root: Path, suite: Suite, shards: int, out: Path) -> dict[str, Any]:
    """ci-shards' plan with no timings: ``--discover`` (files read as text) or ``--pytest`` (collected)."""
    words = [suite.tests, *suite.args] if how == "discover" else [suite.tests, *suite.args, *pytest_opts(suite)]
    flag = "--discover" if how == "discover" else "--pytest"
    argv = [str(python), "-m", "ci_shards", "plan", flag, "--shards", str(shards), "-o", str(out)]
    wall = sh([*argv, "--", *words], cwd=root)
    data = json.loads(out.read_text())
    return {"wall": wall, "cpu": CPU[0], "estimated": [s["estimated_seconds"] for s in data["shards"]]}


def run_shard(
    python: Path, tool: str, index: int, shards: int, *, root: Path, suite: Suite, work: Path
) -> dict[str, Any]:
    """One shard of one tool: its wall and CPU seconds, the tests it ran, and (``first_plan_clock``)
    the CPU of its tests and of its collection, apart from the process's start-up."""
    clock = work / f"clock-{tool}-{index}.json"
    clock.unlink(missing_ok=True)
    if tool == "pytest-split":
        junit = work / f"split-{index}.xml"
        argv = [str(python), "-m", "pytest", suite.tests, *suite.args, *pytest_opts(suite), *CLOCK_OPTS]
        argv += ["--splits", str(shards), "--group", str(index)]
        wall = _clocked([*argv, f"--junitxml={junit}"], root, clock)
        return {"wall": wall, "cpu": CPU[0], "tests": junit.read_text().count("<testcase "), **_clock(clock)}
    out = work / f"out-{tool}"
    argv = [str(python), "-m", "ci_shards", "run", "--plan", str(work / f"plan-{tool}.json"), "--shard"]
    # the same words as the plan (docs/run.md): without the path, the shard's pytest collects the whole rootdir
    # (toolz: its sandbox/tests too, run unplanned in the unowned shard; run 5)
    words = [suite.tests, *suite.args, *pytest_opts(suite), *CLOCK_OPTS]
    argv += [f"{index}/{shards}", "--out", str(out), "--pytest", "--", *words]
    wall = _clocked(argv, root, clock)
    outcome = json.loads((out / f"shard-{index}-of-{shards}" / "outcome.json").read_text())
    tests = outcome["executed_tests"] + outcome["skipped"]
    return {"wall": wall, "cpu": CPU[0], "tests": tests, "status": outcome["status"], **_clock(clock)}


def _clocked(argv: list[str], root: Path, clock: Path) -> float:
    """``sh`` with the clock plugin importable and told where to write."""
    saved = dict(ENV)
    ENV["FIRST_PLAN_CLOCK"] = str(clock)
    ENV["PYTHONPATH"] = os.pathsep.join(p for p in (str(BENCHMARKS), saved.get("PYTHONPATH", "")) if p)
    try:
        return sh(argv, cwd=root)
    finally:
        ENV.clear()
        ENV.update(saved)


def _clock(clock: Path) -> dict[str, Any]:
    """What the clock plugin wrote: the shard's tests' CPU seconds, its collection's, and each test's."""
    if not clock.is_file():  # pytest stopped before the session finished
        return {"tests_cpu": None, "collect_cpu": None, "per_test": {}}
    data = json.loads(clock.read_text(encoding="utf-8"))
    return {"tests_cpu": data["tests_cpu_s"], "collect_cpu": data["collect_cpu_s"], "per_test": data["tests"]}


def one_round(python: Path, suite: Suite, root: Path, work: Path, shards: int) -> dict[str, Any]:
    planned = TOOLS[:2]
    plans = {
        how: plan(python, how, root=root, suite=suite, shards=shards, out=work / f"plan-{how}.json") for how in planned
    }
    runs: dict[str, list[dict[str, Any]]] = {tool: [] for tool in TOOLS}
    for index in range(1, shards + 1):
        for tool in TOOLS:
            runs[tool].append(run_shard(python, tool, index, shards, root=root, suite=suite, work=work))
    result: dict[str, Any] = {
        "test_time_bound": _test_time_bound(work, shards),
        "test_cpu_bound": _cpu_bound(runs["pytest-split"], shards),
    }
    for tool in TOOLS:
        walls = [r["wall"] for r in runs[tool]]
        cpus = [r["cpu"] for r in runs[tool]]
        tests_cpu = [r["tests_cpu"] for r in runs[tool]]
        result[tool] = {
            "slowest_over_mean_wall": _ratio(walls),
            "slowest_over_mean_cpu": _ratio(cpus),
            # the tests' own CPU (start-up and collection aside) and tests + collection (start-up aside)
            "slowest_over_mean_tests_cpu": _ratio(tests_cpu),
            "slowest_over_mean_tests_collect_cpu": _ratio(
                [None if r["tests_cpu"] is None else r["tests_cpu"] + r["collect_cpu"] for r in runs[tool]]
            ),
            "walls_s": [round(w, 2) for w in walls],
            "cpus_s": [round(c, 2) for c in cpus],
            "tests_cpus_s": [None if c is None else round(c, 2) for c in tests_cpu],
            "collect_cpus_s": [None if r["collect_cpu"] is None else round(r["collect_cpu"], 2) for r in runs[tool]],
            "tests": [r["tests"] for r in runs[tool]],
            "statuses": [r.get("status", "") for r in runs[tool]],
        }
        if tool in plans:
            result[tool] |= {
                "plan_wall_s": round(plans[tool]["wall"], 2),
                "plan_cpu_s": round(plans[tool]["cpu"], 2),
                "estimated_s": plans[tool]["estimated"],
            }
    result["per_test_cpu_s"] = {k: v for r in runs["pytest-split"] for k, v in r["per_test"].items()}
    return result


def _ratio(values: list[float | None]) -> float | None:
    """Slowest over mean, or None when a shard's figure is missing."""
    if any(v is None for v in values) or not values:
        return None
    known = [v for v in values if v is not None]
    mean = statistics.mean(known)
    return round(max(known) / mean, 3) if mean else None


def _cpu_bound(split_runs: list[dict[str, Any]], shards: int) -> dict[str, Any]:
    """The bound of ``_test_time_bound`` from the tests' CPU seconds (the clock of pytest-split's shards:
    every test once), robust to the load where JUnit's wall times are not."""
    times = {k: v for r in split_runs for k, v in r["per_test"].items()}
    if not times:
        return {"bound": None}
    total = sum(times.values())
    longest = max(sorted(times), key=lambda k: times[k])
    share = total / shards
    return {
        "bound": round(max(times[longest], share) / share, 3),
        "longest_test": longest,
        "longest_s": round(times[longest], 3),
        "tests_s": round(total, 2),
    }


_TESTCASE = re.compile(r'<testcase\b[^>]*?\sname="([^"]*)"[^>]*?\stime="([0-9.]+)"')


def _test_time_bound(work: Path, shards: int) -> dict[str, Any]:
    """The physics bound on slowest ÷ mean from the tests' own times (pytest-split's JUnit of this
    round: every test once): no plan of whole tests beats max(longest test, total / N) ÷ (total / N).
    Process start-up and collection are outside it (they only lower what any plan reaches)."""
    times = []
    longest = ("", 0.0)
    for index in range(1, shards + 1):
        for name, seconds in _TESTCASE.findall((work / f"split-{index}.xml").read_text(encoding="utf-8")):
            times.append(float(seconds))
            longest = max(longest, (name, float(seconds)), key=lambda pair: pair[1])
    mean = sum(times) / shards if times else 0.0
    bound = max(longest[1], mean) / mean if mean else 1.0
    return {
        "bound": round(bound, 3),
        "longest_test": longest[0],
        "longest_s": longest[1],
        "tests_s": round(sum(times), 2),
    }


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--venv", type=Path, default=Path("/tmp/ci-shards-first-plan"), help="(default: /tmp/ci-shards-first-plan)"
    )
    parser.add_argument("--suites", nargs="+", choices=sorted(SUITES), default=list(SUITES), help="(default: all)")
    parser.add_argument("--shards", type=int, default=4, help="(default: 4)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds per suite (default: 1)")
    parser.add_argument("--json-out", type=Path, default=None, help="also write the result here (default: none)")
    args = parser.parse_args()
    python = ensure_venv(args.venv)
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{' '.join(platform.uname())}, nproc {os.cpu_count()}, Python {platform.python_version()}",
        "command": shlex.join(sys.argv),
        "shards": args.shards,
    }
    work_root = args.venv / "bench"
    for name in args.suites:
        suite = SUITES[name]
        work = work_root / name
        work.mkdir(parents=True, exist_ok=True)
        root = unpacked(python, suite, work)
        rounds = []
        for _ in range(args.repeat):
            before = _load()
            rounds.append({**one_round(python, suite, root, work, args.shards), "load": [before, _load()]})
            shown = {k: v for k, v in rounds[-1].items() if k != "per_test_cpu_s"}
            print(f"{name}: {json.dumps(shown)}", file=sys.stderr)
        result[name] = {
            "suite": f"{suite.distribution} {suite.version} sdist {suite.tests}/",
            "median_slowest_over_mean": {tool: _medians(rounds, tool) for tool in TOOLS},
            "rounds": rounds,
        }
        _write(result, args.json_out)  # after every suite: an interrupted run keeps what it measured
    result["load_at_the_end"] = _load()
    print(_write(result, args.json_out))


def _medians(rounds: list[dict[str, Any]], tool: str) -> dict[str, float | None]:
    """Each figure's median over the rounds (None when a round lacks it)."""
    medians: dict[str, float | None] = {}
    for measure in ("cpu", "wall", "tests_cpu", "tests_collect_cpu"):
        values = [r[tool][f"slowest_over_mean_{measure}"] for r in rounds]
        medians[measure] = None if None in values else statistics.median(values)
    return medians


def _write(result: dict[str, Any], path: Path | None) -> str:
    text = json.dumps(result, indent=2)
    if path is not None:
        path.write_text(text, encoding="utf-8")
    return text


if __name__ == "__main__":
    main()
