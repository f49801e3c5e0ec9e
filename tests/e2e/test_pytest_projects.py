"""``plan --pytest`` and ``run --pytest`` over real pytest projects made here, called as maintainers call them.

Each project is planned from its root and from a subfolder with output options in the args (``-q``,
``-v``, ``-rA``, ``--tb=line``, ``addopts``), every shard is a real ``ci-shards run`` process, and
``aggregate`` gives the verdict. "Every test exactly once" is checked against pytest's own
``--junitxml`` of each shard and of one plain run of the whole suite, not through ci-shards' JUnit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import CHILD_ADDOPTS

pytestmark = pytest.mark.e2e

TESTS = """
import pytest

@pytest.mark.parametrize("n", range(4))
def test_param(n):
    assert n >= 0

class TestThing:
    def test_one(self):
        pass

    @pytest.mark.skip(reason="not here")
    def test_skipped(self):
        pass

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False
"""
CONFTEST_WITH_OPTION = """
import pytest

def pytest_addoption(parser):
    parser.addoption("--db-url", default="sqlite://", help="a project option that takes a value")

@pytest.fixture
def db_url(request):
    return request.config.getoption("--db-url")
"""
USES_OPTION = "def test_db(db_url):\n    assert db_url == 'sqlite://mem'\n"
INI = '[tool.pytest.ini_options]\naddopts = "-q -ra"\npythonpath = ["{path}"]\n'


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def _package(prefix: str, name: str) -> dict[str, str]:
    """A package with its tests inside it (run with --pyargs)."""
    return {
        f"{prefix}{name}/__init__.py": "",
        f"{prefix}{name}/tests/__init__.py": "",
        f"{prefix}{name}/tests/test_a.py": TESTS,
        f"{prefix}{name}/tests/test_b.py": TESTS,
        f"{prefix}{name}/tests/sub/__init__.py": "",
        f"{prefix}{name}/tests/sub/test_c.py": TESTS,
    }


LAYOUTS: dict[str, dict[str, str]] = {
    "src": {
        "pyproject.toml": INI.format(path="src"),
        "src/pkg/__init__.py": "VALUE = 1\n",
        "tests/conftest.py": CONFTEST_WITH_OPTION,
        "tests/test_core.py": "from pkg import VALUE\n" + TESTS,
        "tests/test_more.py": TESTS,
        "tests/unit/test_db.py": USES_OPTION,
    },
    "flat": {
        "pytest.ini": "[pytest]\naddopts = -q -ra\npythonpath = .\n",
        "pkg/__init__.py": "VALUE = 1\n",
        "conftest.py": CONFTEST_WITH_OPTION,
        "tests/test_core.py": "from pkg import VALUE\n" + TESTS,
        "tests/test_db.py": USES_OPTION,
        "tests/deep/test_more.py": TESTS,
    },
    "pyargs": {"pyproject.toml": INI.format(path="src"), "docs/index.md": "", **_package("src/", "pkg")},
    "two-packages": {
        "pyproject.toml": INI.format(path="src"),
        "docs/index.md": "",
        **_package("src/", "pkga"),
        **_package("src/", "pkgb"),
    },
}
# (layout, folder the plan and the runs are made in, collection args, run args: the run's pytest is given
# them, not the shard's files, so they select the same suite, written another way)
CASES = [
    ("src", ".", ["tests", "-q", "--db-url=sqlite://mem"], ["tests", "-rA", "--db-url", "sqlite://mem"]),
    ("src", "tests", [".", "-v", "--tb=line", "--db-url", "sqlite://mem"], ["--tb=line", "--db-url=sqlite://mem"]),
    ("flat", ".", ["-rA", "--db-url", "sqlite://mem"], ["tests", "-v", "--db-url", "sqlite://mem"]),
    ("flat", "tests", ["-q", "--tb=line", "--db-url=sqlite://mem"], [".", "-q", "--db-url=sqlite://mem"]),
    ("pyargs", ".", ["--pyargs", "pkg", "-v"], ["--pyargs", "pkg", "-rA"]),
    ("pyargs", "docs", ["--pyargs", "pkg.tests", "-q", "--tb=line"], ["--pyargs", "pkg", "-q"]),
    ("pyargs", "src/pkg", ["--pyargs", "pkg", "-rA"], ["--tb=line"]),
    ("two-packages", ".", ["--pyargs", "pkga", "pkgb", "-v", "-rA"], ["--pyargs", "pkga", "pkgb", "--tb=line"]),
    ("two-packages", "docs", ["--pyargs", "pkga", "pkgb", "-q"], ["--pyargs", "pkgb", "pkga", "-v"]),
]
SHARDS = 3


def _env() -> dict[str, str]:
    """This environment without a user's PYTEST_ADDOPTS (the oracle is plain pytest) but with the suite's own, which
    only leaves hypothesis' plugin unloaded: 5 pytest starts per test, 0.17 CPU s each (tests/conftest.py)."""
    plain = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "PYTEST_ADDOPTS")}
    return {**plain, "PYTEST_ADDOPTS": CHILD_ADDOPTS}


def ci_shards(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "ci_shards", *args]
    return subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True, check=False, timeout=300)


def junit_cases(*paths: Path) -> Counter[tuple[str, str, str]]:
    """(classname, name, outcome) of every testcase in pytest's own JUnit files."""
    found: Counter[tuple[str, str, str]] = Counter()
    for path in paths:
        for case in ET.parse(path).iter("testcase"):
            outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
            found[(case.get("classname", ""), case.get("name", ""), outcome)] += 1
    return found


def plain_run(cwd: Path, args: list[str], tmp: Path) -> Counter[tuple[str, str, str]]:
    """The whole suite in one plain pytest process, without ci-shards: the reference."""
    junit = tmp / "reference.xml"
    argv = [sys.executable, "-m", "pytest", "-p", "no:ci_shards", "-p", "no:cacheprovider", f"--junitxml={junit}"]
    subprocess.run([*argv, *args], cwd=cwd, env=_env(), capture_output=True, check=False, timeout=300)
    return junit_cases(junit)


def shard_all(cwd: Path, collect: list[str], run: list[str]) -> tuple[list[Path], int, str]:
    """plan, every shard as a real ``ci-shards run``, aggregate: (pytest's JUnit per shard, exit, stderr)."""
    planned = ci_shards("plan", "--pytest", "--shards", str(SHARDS), "-o", "plan.json", "--", *collect, cwd=cwd)
    assert planned.returncode == 0, planned.stderr
    junits = []
    for index in range(1, SHARDS + 1):
        junit = cwd / f"pytest-{index}.xml"
        extra = [*run, f"--junitxml={junit}", "-p", "no:cacheprovider"]
        ran = ci_shards("run", "--no-live", "--shard", f"{index}/{SHARDS}", "--pytest", "--", *extra, cwd=cwd)
        assert ran.returncode in (0, 1), ran.stderr
        junits.append(junit)
    aggregated = ci_shards("aggregate", "--plan", "plan.json", "ci-shards-results", cwd=cwd)
    return junits, aggregated.returncode, aggregated.stdout + aggregated.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("layout", "folder", "collect", "run"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_every_test_runs_exactly_once(tmp_path: Path, layout: str, folder: str, collect: list[str], run: list[str]):
    _write(tmp_path, LAYOUTS[layout])
    cwd = tmp_path / folder
    reference = plain_run(cwd, [a for a in collect if a not in ("-q", "-v", "-rA")], tmp_path)
    assert reference, "the reference run collected nothing"
    assert not [c for c in reference if c[2] in ("failure", "error")], reference

    junits, code, said = shard_all(cwd, collect, run)

    assert sum(junit_cases(*junits).values()) == sum(reference.values())
    assert junit_cases(*junits) == reference  # every test once, same outcome, none twice
    assert code == 0, said
    plan = json.loads((cwd / "plan.json").read_text())
    assert (cwd / plan["rootdir"]).resolve() == tmp_path.resolve()  # where the project's ini file is


@pytest.mark.slow
def test_a_failing_test_fails_the_aggregate_and_runs_once(tmp_path: Path) -> None:
    _write(tmp_path, {**LAYOUTS["pyargs"], "src/pkg/tests/test_bad.py": "def test_bad():\n    assert 1 == 2\n"})
    junits, code, said = shard_all(tmp_path, ["--pyargs", "pkg", "-q"], ["--pyargs", "pkg"])
    failures = [c for c, n in junit_cases(*junits).items() if c[2] == "failure" for _ in range(n)]
    assert failures == [("src.pkg.tests.test_bad", "test_bad", "failure")]
    assert code == 1, said
    assert "test_bad" in said


def test_run_refuses_a_plan_whose_rootdir_is_not_here(tmp_path: Path) -> None:
    _write(tmp_path / "proj", LAYOUTS["src"])
    planned = ci_shards("plan", "--pytest", "--shards", "2", "-o", "plan.json", "--", "proj/tests", cwd=tmp_path)
    assert planned.returncode == 0, planned.stderr
    assert json.loads((tmp_path / "plan.json").read_text())["rootdir"] == "proj"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "plan.json").write_text((tmp_path / "plan.json").read_text())
    ran = ci_shards("run", "--shard", "1/2", "--plan", "plan.json", "--pytest", cwd=elsewhere)
    assert ran.returncode == 2
    assert ran.stderr.strip().endswith(
        f"the plan's pytest rootdir 'proj' is not a folder under {elsewhere}: run from the folder the plan was made in"
    ), ran.stderr


@pytest.mark.slow
def test_collection_errors_name_the_failing_collector(tmp_path: Path) -> None:
    _write(tmp_path, {**LAYOUTS["src"], "tests/test_broken.py": "import no_such_module_here\n"})
    planned = ci_shards(
        "plan", "--pytest", "--shards", "2", "--", "tests", "-q", "-p", "no:cacheprovider", cwd=tmp_path
    )
    assert planned.returncode == 2
    assert planned.stdout == ""
    lines = planned.stderr.strip().splitlines()
    assert len(lines) == 1, planned.stderr
    assert "tests/test_broken.py: ModuleNotFoundError: No module named 'no_such_module_here'" in lines[0]
    missing = ci_shards("plan", "--pytest", "--shards", "2", "--", "--pyargs", "no_such_pkg", "-v", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        "ci-shards: pytest collection failed (exit 4, usage error): module or package not found: no_such_pkg"
        " (missing __init__.py?); no plan was made"
    ]


def test_ids_pytest_collects_twice_are_planned_once(tmp_path: Path) -> None:
    _write(tmp_path, LAYOUTS["src"])
    # the same file twice with --keep-duplicates: two items with one id, which a shard runs both of
    argv = ["plan", "--pytest", "--shards", "2", "--format", "json", "--"]
    planned = ci_shards(*argv, "tests/test_more.py", "tests/test_more.py", "--keep-duplicates", cwd=tmp_path)
    assert planned.returncode == 0, planned.stderr
    ids = [i for s in json.loads(planned.stdout)["shards"] for i in s["items"]]
    assert sorted(ids) == sorted(set(ids))
    assert "tests/test_more.py::test_param[0]" in ids


@pytest.mark.slow
def test_timings_recorded_inside_the_package_are_remapped_at_the_repository_root(tmp_path: Path) -> None:
    _write(tmp_path, {**_package("src/", "pkg"), "pyproject.toml": INI.format(path="src")})
    collect = ["--pyargs", "pkg", "-q"]
    plain = ci_shards("plan", "--pytest", "--shards", "1", "--format", "json", "--", *collect, cwd=tmp_path)
    ids = [i for s in json.loads(plain.stdout)["shards"] for i in s["items"]]
    assert ids and all(i.startswith("src/pkg/tests/") for i in ids)
    seconds = {i: 0.1 + (n * 7919 % 97) / 10 for n, i in enumerate(ids)}  # uneven, deterministic
    # what a run inside the package (its own rootdir) records, and what one at the root would
    (tmp_path / "inside.json").write_text(json.dumps({i.removeprefix("src/pkg/"): s for i, s in seconds.items()}))
    (tmp_path / "matching.json").write_text(json.dumps(seconds))

    def plan(*extra: str) -> tuple[dict[str, object], str]:
        done = ci_shards("plan", "--pytest", "--shards", "4", "--format", "json", *extra, "--", *collect, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout), done.stderr

    remapped, said = plan("--durations", "inside.json")
    reference, _ = plan("--durations", "matching.json")
    assert f"{len(ids)} of {len(ids)} items had no timing under their own id and were matched" in said
    assert "ids 'src/pkg/…' ↔ timings '…'" in said
    assert remapped["unknown_items"] == reference["unknown_items"] == 0
    slowest = [max(s["estimated_seconds"] for s in p["shards"]) for p in (remapped, reference)]  # type: ignore[attr-defined]
    assert abs(slowest[0] - slowest[1]) <= 0.02 * slowest[1]
    rebased, said = plan("--durations", "inside.json", "--durations-root", "src/pkg")  # told where: nothing to guess
    assert "matched" not in said and rebased["shards"] == reference["shards"]

    (tmp_path / "unrelated.json").write_text(json.dumps({f"x/test_{n}.py::t": 1.0 for n in range(len(ids))}))
    refused = ci_shards(
        "plan", "--pytest", "--shards", "4", "--durations", "unrelated.json", "--", *collect, cwd=tmp_path
    )
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        f"ci-shards: only 0 of {len(ids)} items match a timing, even by path suffix (recorded under another root?):"
        " pass --durations-root DIR (the folder the timings' ids are relative to), or --allow-unmatched-timings"
    ]
    allowed = ci_shards(
        "plan",
        "--pytest",
        "--shards",
        "4",
        "--durations",
        "unrelated.json",
        "--allow-unmatched-timings",
        "--",
        *collect,
        cwd=tmp_path,
    )
    assert allowed.returncode == 0, allowed.stderr
    assert f"ratio n/a over measured items; {len(ids)} of {len(ids)} items guessed" in allowed.stdout
