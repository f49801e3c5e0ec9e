"""Issue 26: a ``--pytest`` shard runs pytest's own suite, whatever paths pytest agrees to collect.

Small generated projects of the shapes that broke on real ones, every shard a real pytest, each
compared with one plain ``python -m pytest`` of the same arguments:

- a conftest whose ``collect_ignore`` is computed (attrs 26.1.0: ``.extend`` under a Python-version
  ``if``), planned by discovery from timings that name the left-out file: that file costs its
  shard nothing and is reported with pytest's reason (26.1);
- a package with its tests inside it, on ``sys.path`` outside the working directory (PYTHONPATH:
  for pytest the same shape as site-packages), run with ``--pyargs`` of some of its sub-packages
  from another folder, planned by ``plan --pytest`` and ``plan --discover`` from pytest-split-style
  timings and run through ``local`` (26.2);
- the shard that runs files no shard owns walks what the arguments select, never the common
  folder of the planned files (26.3);
- ``--pyargs`` of test modules (mpmath 1.4.1's), which pytest names "" (``::test_x``), and a file named as an
  argument that fails to collect, which every shard imports (conformance run 7);
- a collection error plain pytest runs past (``--continue-on-collection-errors``, pytest-xdist's ``-n``: yarl
  1.25.1's addopts), which a ``--pytest`` plan refused (conformance run 10).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from tests.e2e.test_pytest_projects import _write, ci_shards, junit_cases, plain_run

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PARAMETRIZED = """
import pytest

@pytest.mark.parametrize("n", range(3))
def test_{name}(n):
    pass
"""
# imported by anything, it fails: a shard that collects it, or walks into it, reports an error
REFUSES_IMPORT = "import no_such_module_anywhere\n\ndef test_never():\n    pass\n"
# a condition only running the conftest decides (one on the interpreter, discovery now decides: plan.interpreter_facts)
COMPUTED_IGNORE = """
import os

collect_ignore = []
if os.path.exists(__file__):
    collect_ignore.extend(["test_forward.py"])
"""


def _shard_junits(results: Path) -> list[Path]:
    return sorted(results.glob("shard-*/junit.xml"))


def _ran(cases: Counter[tuple[str, str, str]]) -> Counter[tuple[str, str, str]]:
    """The cases that are tests pytest ran (a file reported skipped at collection is not one)."""
    return Counter({c: n for c, n in cases.items() if not (c[2] == "skipped" and c[1].endswith(".py"))})


def test_a_file_a_computed_collect_ignore_leaves_out_costs_its_shard_nothing(tmp_path: Path) -> None:
    files = {"tests/__init__.py": "", "tests/conftest.py": COMPUTED_IGNORE, "tests/test_forward.py": REFUSES_IMPORT}
    files |= {f"tests/test_{x}.py": PARAMETRIZED.format(name=x) for x in "abcd"}
    _write(tmp_path, files)
    # the timings of a run that collected the file (before the rule, or on another Python)
    timings = {f"tests/test_{x}.py::test_{x}[{n}]": 1.0 for x in "abcd" for n in range(3)}
    (tmp_path / "d.json").write_text(json.dumps({**timings, "tests/test_forward.py::test_never": 0.5}))
    reference = plain_run(tmp_path, ["tests"], tmp_path)
    assert sum(reference.values()) == 12

    argv = ["local", "--discover", "--durations", "d.json", "--shards", "2", "--out", "results", "--pytest"]
    done = ci_shards(*argv, "--", "tests", "-p", "no:cacheprovider", cwd=tmp_path)

    plan = json.loads((tmp_path / "results/plan.json").read_text())
    shard_of = {i: s["index"] for s in plan["shards"] for i in s["items"]}
    # discovery cannot know a computed list: the file is planned, in a shard that is given other files
    forward = shard_of["tests/test_forward.py"]
    assert forward != plan["unowned_shard"] and list(shard_of.values()).count(forward) > 1, plan
    assert done.returncode == 0, done.stdout + done.stderr
    assert "never ran" not in done.stdout + done.stderr
    cases = junit_cases(*_shard_junits(tmp_path / "results"))
    assert _ran(cases) == reference  # every other test of that shard ran, once, as in plain pytest
    said = "".join(p.read_text() for p in _shard_junits(tmp_path / "results")) + done.stdout + done.stderr
    assert "collect_ignore" in said  # pytest's own reason for leaving the file out


PACKAGE_SUBS = ("alpha", "beta", "gamma")


def _installed_package(site: Path) -> None:
    """``mypkg`` with tests inside each sub-package; ``gamma`` is not asked for, and refuses import."""
    files = {"mypkg/__init__.py": ""}
    for sub in PACKAGE_SUBS:
        files |= {f"mypkg/{sub}/__init__.py": "", f"mypkg/{sub}/tests/__init__.py": ""}
        for name in ("one", "two"):
            test = PARAMETRIZED.format(name=f"{sub}_{name}") if sub != "gamma" else REFUSES_IMPORT
            files[f"mypkg/{sub}/tests/test_{sub}_{name}.py"] = test
    _write(site, files)


@pytest.fixture
def neutral_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A work folder with no pytest settings; ``mypkg`` importable from elsewhere, as an installed package."""
    _installed_package(tmp_path / "site")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")]))
    work = tmp_path / "work"
    work.mkdir()
    return work


PYARGS = ["--pyargs", "mypkg.alpha", "mypkg.beta"]
# what pytest-split records in that same setup (pytest's node ids), uneven so the balance cuts files
SPLIT_TIMINGS = {
    f"tests/test_{sub}_{name}.py::test_{sub}_{name}[{n}]": 0.5 + n * 0.7 + (sub == "beta")
    for sub in ("alpha", "beta")
    for name in ("one", "two")
    for n in range(3)
}


@pytest.mark.parametrize("source", ["--pytest", "--discover"])
def test_a_package_installed_elsewhere_runs_its_pyargs_suite_from_another_folder(
    neutral_folder: Path, source: str
) -> None:
    work = neutral_folder
    (work / ".test_durations").write_text(json.dumps(SPLIT_TIMINGS))
    reference = plain_run(work, PYARGS, work)
    assert sum(reference.values()) == 12 and not [c for c in reference if c[2] != "passed"]

    argv = ["plan", source, "--durations", ".test_durations", "--shards", "3", "-o", "plan.json"]
    planned = ci_shards(*argv, "--", *PYARGS, cwd=work)
    assert planned.returncode == 0, planned.stderr
    plan = json.loads((work / "plan.json").read_text())
    assert plan["unknown_items"] == 0  # pytest-split's ids are the plan's: nothing guessed
    assert "matched" not in planned.stderr  # nor re-mapped by path suffix
    if source == "--discover":
        (note,) = [n for n in plan["notes"] if n.startswith("discovered")]
        assert note.startswith("discovered 4 test files in --pyargs mypkg.alpha (")
        assert f"mypkg.beta ({neutral_folder.parent / 'site/mypkg/beta'})" in note, note
        assert not [n for n in plan["notes"] if "no longer on disk" in n]
    for index in (1, 2, 3):
        extra = [*PYARGS, f"--junitxml={work}/pytest-{index}.xml", "-p", "no:cacheprovider"]
        ran = ci_shards("run", "--no-live", "--shard", f"{index}/3", "--pytest", "--", *extra, cwd=work)
        assert ran.returncode == 0, ran.stderr
    assert junit_cases(*(work / f"pytest-{i}.xml" for i in (1, 2, 3))) == reference
    aggregated = ci_shards("aggregate", "--plan", "plan.json", "--format", "json", "ci-shards-results", cwd=work)
    assert aggregated.returncode == 0, aggregated.stderr
    assert json.loads(aggregated.stdout)["totals"]["passed"] == 12


def test_local_runs_the_pyargs_suite_from_another_folder_to_pytests_counts(neutral_folder: Path) -> None:
    work = neutral_folder
    reference = plain_run(work, PYARGS, work)
    for _ in range(2):  # the second time planned from the timings the first one learned
        learned = ["--durations", "timings.json"] if (work / "timings.json").exists() else []
        argv = ["local", "--discover", *learned, "--timings-out", "timings.json", "--shards", "3", "--pytest"]
        done = ci_shards(*argv, "--", *PYARGS, "-p", "no:cacheprovider", cwd=work)
        assert done.returncode == 0, done.stderr
        assert "PASSED: 12 tests, 12 passed, 0 failed, 0 errors, 0 skipped" in done.stdout + done.stderr, done.stderr
        assert junit_cases(*_shard_junits(work / "ci-shards-results")) == reference


SAME_NAME = "import pytest\n\n@pytest.mark.parametrize('n', range(3))\ndef test_same(n):\n    assert n != {fails}\n"


@pytest.mark.parametrize("plan", [[], ["--discover"]])
def test_test_modules_named_by_pyargs_from_another_folder_run_as_plain_pytest_runs_them(
    neutral_folder: Path, plan: list[str]
) -> None:
    # --pyargs of two test modules (mpmath 1.4.1's shape): pytest names each module "" as a collection argument
    # outside its rootdir, so both files' tests are ``::test_same[0]`` ...; a --pytest plan refused them and a shard
    # named the second file's tests by the first file's path
    site = neutral_folder.parent / "site/mypkg"
    _write(site, {"alpha/tests/test_same_a.py": SAME_NAME.format(fails=-1)})
    _write(site, {"beta/tests/test_same_b.py": SAME_NAME.format(fails=1)})
    _write(site, {"beta/tests/test_skips.py": "import pytest\n\npytest.importorskip('no_such_module_anywhere')\n"})
    modules = ["mypkg.alpha.tests.test_same_a", "mypkg.beta.tests.test_same_b", "mypkg.beta.tests.test_skips"]
    args = ["--pyargs", *modules, "-p", "no:cacheprovider"]
    reference = plain_run(neutral_folder, args, neutral_folder)
    assert Counter(outcome for _, _, outcome in reference.elements()) == {"passed": 5, "failure": 1, "skipped": 1}

    done = ci_shards("local", *plan, "--shards", "2", "--pytest", "--", *args, cwd=neutral_folder)
    assert "FAILED: 1 test failed" in done.stderr + done.stdout, done.stderr
    assert "5 passed, 1 failed, 0 errors, 1 skipped" in done.stderr + done.stdout, done.stderr
    ids: Counter[str | None] = Counter()
    for junit in _shard_junits(neutral_folder / "ci-shards-results"):
        ids.update(case.get("ci-shards-id") for case in ET.parse(junit).iter("testcase"))
    files = ("../site/mypkg/alpha/tests/test_same_a.py", "../site/mypkg/beta/tests/test_same_b.py")
    skipped = "../site/mypkg/beta/tests/test_skips.py"  # the module's skip, one skipped test as pytest counts it
    assert ids == Counter([f"{file}::test_same[{n}]" for file in files for n in range(3)] + [skipped])


def test_a_pytest_plan_names_the_unnamed_module_that_fails_to_collect_and_files_its_deselected_tests_by_path(
    neutral_folder: Path,
) -> None:
    # a module pytest names "" (--pyargs of a test module from another folder): the refusal said "in the session",
    # and the tests -k took away from such a module were counted under the file "" (the plan's estimates)
    site = neutral_folder.parent / "site/mypkg"
    _write(site, {"alpha/tests/test_same_a.py": SAME_NAME.format(fails=-1)})
    _write(site, {"beta/tests/test_broken.py": REFUSES_IMPORT})
    argv = ["plan", "--pytest", "--shards", "2", "-o", "plan.json", "--", "--pyargs", "-p", "no:cacheprovider"]
    refused = ci_shards(*argv, "mypkg.alpha.tests.test_same_a", "mypkg.beta.tests.test_broken", cwd=neutral_folder)
    assert refused.returncode == 2, refused.stderr
    assert "in ../site/mypkg/beta/tests/test_broken.py: " in refused.stderr, refused.stderr

    # what the plan's collection records (its weights count a deselected test as collected in its file)
    record = neutral_folder / "collection.json"
    collect = ["--collect-only", "-p", "ci_shards", f"--ci-shards-collect-to={record}", "-p", "no:cacheprovider"]
    args = [*collect, "--pyargs", "mypkg.alpha.tests.test_same_a", "-k", "not same[1]"]
    done = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=neutral_folder, capture_output=True, check=False)
    assert done.returncode == 0, done.stdout
    assert json.loads(record.read_text())["deselected"] == {"../site/mypkg/alpha/tests/test_same_a.py": 1}


def test_a_file_named_as_an_argument_that_fails_to_collect_is_one_error_as_plain_pytest_counts_it(
    tmp_path: Path,
) -> None:
    # pytest collects every file named on its command line without asking pytest_ignore_collect, so each shard of a
    # discovery plan imported it and reported its error: 2 errors and "1 test ran more than once" against 1 error
    files = {"t/test_a.py": PARAMETRIZED.format(name="a"), "t/test_b.py": PARAMETRIZED.format(name="b")}
    _write(tmp_path, {**files, "t/test_d.py": REFUSES_IMPORT})
    args = ["--continue-on-collection-errors", "t/test_a.py", "t/test_b.py", "t/test_d.py", "-p", "no:cacheprovider"]
    reference = plain_run(tmp_path, args, tmp_path)
    assert Counter(outcome for _, _, outcome in reference.elements()) == {"passed": 6, "error": 1}

    done = ci_shards("local", "--discover", "--shards", "2", "--pytest", "--", *args, cwd=tmp_path)
    said = done.stderr + done.stdout
    assert "FAILED: 1 error; 1 of 2 shards did not pass" in said, said  # the other shard's exit 1 is explained
    assert "7 tests, 6 passed, 0 failed, 1 error, 0 skipped" in said, said
    assert "more than once" not in said


@pytest.mark.parametrize(
    "runs_past", [["--continue-on-collection-errors"], ["-n", "2"]], ids=["continue-option", "xdist"]
)
def test_a_collection_error_plain_pytest_runs_past_is_planned_around_not_refused(
    tmp_path: Path, runs_past: list[str]
) -> None:
    # plain pytest runs the other tests when told to continue, and always under pytest-xdist (yarl 1.25.1's
    # addopts -n auto, conformance run 10); the --pytest plan refused the collection ("no plan was made")
    files = {"t/test_a.py": PARAMETRIZED.format(name="a"), "t/test_b.py": PARAMETRIZED.format(name="b")}
    _write(tmp_path, {**files, "t/test_d.py": REFUSES_IMPORT})
    args = [*runs_past, "t", "-p", "no:cacheprovider"]
    reference = plain_run(tmp_path, args, tmp_path)
    assert Counter(outcome for _, _, outcome in reference.elements()) == {"passed": 6, "error": 1}

    done = ci_shards("local", "--shards", "2", "--out", "results", "--pytest", "--", *args, cwd=tmp_path)
    said = done.stderr + done.stdout
    assert done.returncode == 1, said
    assert "7 tests, 6 passed, 0 failed, 1 error, 0 skipped" in said, said
    notes = json.loads((tmp_path / "results/plan.json").read_text())["notes"]
    assert any(n.startswith("pytest's collection reported 1 error (t/test_d.py: ModuleNotFoundError") for n in notes)


def test_the_shard_for_unowned_files_walks_only_the_packages_the_arguments_name(tmp_path: Path) -> None:
    # the package inside the project (pythonpath = src), run with --pyargs of two of its sub-packages;
    # the plan is made from timings, then a test file appears in one of them, which no shard owns
    _installed_package(tmp_path / "src")
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    timings = {
        f"src/mypkg/{sub}/tests/test_{sub}_{name}.py::test_{sub}_{name}[{n}]": 1.0
        for sub in ("alpha", "beta")
        for name in ("one", "two")
        for n in range(3)
    }
    (tmp_path / "d.json").write_text(json.dumps(timings))
    argv = ["plan", "--from-timings", "--durations", "d.json", "--shards", "2", "-o", "plan.json"]
    made = ci_shards(*argv, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    (tmp_path / "src/mypkg/beta/tests/test_beta_new.py").write_text(PARAMETRIZED.format(name="beta_new"))
    reference = plain_run(tmp_path, PYARGS, tmp_path)
    assert sum(reference.values()) == 15

    for index in (1, 2):
        extra = [*PYARGS, f"--junitxml={tmp_path}/pytest-{index}.xml", "-p", "no:cacheprovider"]
        ran = ci_shards("run", "--no-live", "--shard", f"{index}/2", "--pytest", "--", *extra, cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr  # gamma, which refuses import, is never walked into
    assert junit_cases(*(tmp_path / f"pytest-{i}.xml" for i in (1, 2))) == reference
    aggregated = ci_shards("aggregate", "--plan", "plan.json", "--format", "json", "ci-shards-results", cwd=tmp_path)
    assert aggregated.returncode == 0, aggregated.stderr
    accounting = json.loads(aggregated.stdout)["accounting"]
    assert len(accounting["unplanned"]) == 3 and accounting["missing"] == []


STALE = """
import pytest


@pytest.mark.parametrize("n", range(5))
def test_x(n):
    pass


def test_renamed():
    pass


class TestK:
    def test_m(self):
        pass


class TestBroken:
    @pytest.mark.parametrize("nope", [1])
    def test_b(self):
        pass
"""


def test_timings_of_tests_since_deleted_or_renamed_cut_a_file_and_the_run_counts_as_plain_pytest(
    tmp_path: Path,
) -> None:
    # timings recorded before a change (a PR renames and deletes tests, adds cases): discovery cut the file by the
    # timings' ids, and the shard holding the gone ones failed "2 planned tests never ran" where pytest passes
    _write(tmp_path, {"tests/test_a.py": STALE, "tests/test_b.py": "def test_b():\n    pass\n"})
    timings = {f"tests/test_a.py::test_x[{n}]": 5.0 for n in range(3)}
    timings |= {
        "tests/test_a.py::test_gone": 5.0,
        "tests/test_a.py::TestK::test_old": 5.0,
        "tests/test_b.py::test_b": 1,
    }
    timings["tests/test_a.py::TestBroken::test_b"] = 5.0  # its class fails to collect: lost, and said so
    (tmp_path / "d.json").write_text(json.dumps(timings))
    reference = plain_run(tmp_path, ["tests", "--continue-on-collection-errors"], tmp_path)
    assert Counter(outcome for _, _, outcome in reference.elements()) == {"passed": 8, "error": 1}

    argv = ["local", "--discover", "--durations", "d.json", "--shards", "3", "--pytest", "--"]
    done = ci_shards(*argv, "tests", "-p", "no:cacheprovider", cwd=tmp_path)
    said = done.stdout + done.stderr
    plan = json.loads((tmp_path / "ci-shards-results/plan.json").read_text())
    assert "tests/test_a.py::test_gone" in {i for s in plan["shards"] for i in s["items"]}, plan  # the file was cut
    # pytest's own counts: the gone ids are notes, not tests that never ran, and the class's error counts once
    assert "(9 tests, 8 passed, 0 failed, 1 error, 0 skipped)" in said, said
    assert "not a test: tests/test_a.py::test_gone — skipped at collection: its file, collected without" in said
    assert "not a test: tests/test_a.py::TestK::test_old — " in said
    # the class that fails to collect, in a file cut over every shard: each reports it, as a cut file's own
    # collection error (docs/rules.md), and none is a test run twice; its planned test is left out, saying why
    assert "tests/test_a.py::TestBroken::test_b — not collected: tests/test_a.py::TestBroken failed to collect" in said
    assert "more than once" not in said and "never ran" not in said


@pytest.mark.parametrize("plan", [[], ["--discover"]])
def test_arguments_in_two_projects_run_under_the_settings_plain_pytest_finds(tmp_path: Path, plan: list[str]) -> None:
    # `pytest proj_a/tests proj_b/tests` from a monorepo's root reads proj_a's pytest.ini (nothing above both), and
    # collects 2 tests; the shards' forced --rootdir made pytest skip that search, and 4 tests ran (discovery
    # planned by the defaults, too)
    _write(tmp_path, {"proj_a/pytest.ini": "[pytest]\npython_files = check_*.py\n"})
    _write(
        tmp_path,
        {
            f"proj_{p}/tests/{kind}_{p}.py": f"def test_{kind}_{p}():\n    pass\n"
            for p in "ab"
            for kind in ("check", "test")
        },
    )
    args = ["proj_a/tests", "proj_b/tests", "-p", "no:cacheprovider"]
    reference = plain_run(tmp_path, args, tmp_path)
    assert sum(reference.values()) == 2

    done = ci_shards("local", *plan, "--shards", "2", "--pytest", "--", *args, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 tests, 2 passed, 0 failed" in done.stdout + done.stderr, done.stdout + done.stderr
