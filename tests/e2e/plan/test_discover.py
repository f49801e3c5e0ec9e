"""A plan from the timings and the files on disk, run for real: ``ci-shards local --discover``.

The suite changed since its timings were recorded: one new test file, one new test in a known file,
a new file that matches ``python_files`` but holds no test, and one file deleted. The plan imports
nothing (every test module and conftest would refuse to be imported by the planning process), the
new tests run exactly once, the empty file is reported skipped (not lost), and the deleted file's
timings are dropped and counted in the plan's notes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ci_shards.junit import parse_junit
from ci_shards.model.outcome import COLLECTOR_SKIPPED_TYPE, IGNORED_REASON, CaseOutcome, CaseResult

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")]

REPO = Path(__file__).resolve().parents[3]

# Every module refuses to be imported by anything but the shard's pytest: discovery must read files only.
GUARD = "import os\nif 'PYTEST_CURRENT_TEST' not in os.environ and 'PYTEST_VERSION' not in os.environ:\n"
GUARD += "    raise SystemExit('imported outside pytest')\n"


def _tests(*names: str) -> str:
    return GUARD + "".join(f"\ndef {name}():\n    pass\n" for name in names)


def _run_local(
    root: Path, shards: int, *, timed: bool = True, words: tuple[str, ...] = ("tests",)
) -> tuple[int, str, dict[str, object]]:
    out = root / "results"
    argv = [sys.executable, "-m", "ci_shards", "local", "--discover"]
    argv += ["--durations", "durations.json"] if timed else []
    argv += ["--shards", str(shards), "--out", str(out), "--pytest", "--", *words, "-p", "no:cacheprovider"]
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=180, env=env, check=False)
    plan = json.loads((out / "plan.json").read_text())
    return proc.returncode, proc.stdout + proc.stderr, plan


def _cases(root: Path, total: int) -> list[CaseResult]:
    cases: list[CaseResult] = []
    for index in range(1, total + 1):
        cases += parse_junit(root / "results" / f"shard-{index}-of-{total}" / "junit.xml")
    return cases


def _ran(root: Path, total: int) -> list[str]:
    return [c.test_id for c in _cases(root, total) if c.outcome is not CaseOutcome.SKIPPED]


def _suite(root: Path, files: dict[str, str], timings: dict[str, float]) -> None:
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (root / "tests").mkdir()
    (root / "tests" / "conftest.py").write_text(GUARD)
    for name, text in files.items():
        (root / "tests" / name).write_text(text)
    (root / "durations.json").write_text(json.dumps(timings))


@pytest.mark.slow
def test_new_file_and_new_test_in_a_known_file_run_once_and_deleted_timings_are_dropped(tmp_path: Path) -> None:
    # recorded: known (3 s), other (3 s), gone (deleted since); now: known has test_a3, new file test_new
    timings = {"tests/test_known.py::test_a1": 1.5, "tests/test_known.py::test_a2": 1.5}
    timings |= {f"tests/test_other.py::test_b{n}": 0.75 for n in range(4)}
    timings |= {"tests/test_gone.py::test_g1": 2.0, "tests/test_gone.py::test_g2": 2.0}
    _suite(
        tmp_path,
        {
            "test_known.py": _tests("test_a1", "test_a2", "test_a3"),
            "test_other.py": _tests(*(f"test_b{n}" for n in range(4))),
            "test_new.py": _tests("test_n1"),
            # matches python_files but holds no test (a base class, helpers): collected, nothing to run
            "base_test.py": GUARD + "\nclass BaseChecks:\n    def test_shared(self):\n        pass\n",
        },
        timings,
    )
    code, output, plan = _run_local(tmp_path, 3)
    assert code == 0, output
    notes = "\n".join(plan["notes"])  # type: ignore[arg-type]
    assert "dropped the timings of 2 items in 1 file no longer on disk" in notes
    assert "2 test files without timings estimated" in notes and "tests/test_new.py" in notes
    assert plan["unknown_items"] == 2
    ran = _ran(tmp_path, 3)
    expected = [f"tests/test_known.py::test_a{n}" for n in (1, 2, 3)] + ["tests/test_new.py::test_n1"]
    expected += [f"tests/test_other.py::test_b{n}" for n in range(4)]
    assert sorted(ran) == sorted(expected)  # each exactly once, the two new ones included
    empty = [c for c in _cases(tmp_path, 3) if c.outcome is CaseOutcome.SKIPPED]
    assert [(c.file, c.message) for c in empty] == [
        ("tests/base_test.py", "skipped at collection: the file holds no tests")
    ]
    assert not [i for s in plan["shards"] for i in s["items"] if "test_gone" in i]  # type: ignore[index]


def test_a_new_test_in_a_file_the_plan_cuts_runs_once(tmp_path: Path) -> None:
    timings = {f"tests/test_big.py::test_b{n}": 1.0 for n in range(6)} | {"tests/test_small.py::test_s": 1.0}
    _suite(
        tmp_path,
        {"test_big.py": _tests(*(f"test_b{n}" for n in range(6)), "test_b_new"), "test_small.py": _tests("test_s")},
        timings,
    )
    code, output, plan = _run_local(tmp_path, 2)
    shards_with_big = [s for s in plan["shards"] if any("test_big.py" in i for i in s["items"])]  # type: ignore[union-attr]
    assert len(shards_with_big) == 2, plan  # the 6 s file is cut to balance 7 s over 2 shards
    assert _ran(tmp_path, 2).count("tests/test_big.py::test_b_new") == 1, output
    assert code == 0, output


def test_files_the_project_leaves_out_are_neither_planned_nor_run(tmp_path: Path) -> None:
    # a literal collect_ignore in a conftest and --ignore in the arguments are read by discovery: not
    # planned; a computed collect_ignore_glob is code discovery never runs: the plan names the file,
    # and the shard's pytest, given the file by name, would run it; the plugin asks pytest instead
    timings = {"tests/test_kept.py::test_k": 1.0, "tests/test_left_out.py::test_l": 1.0}
    failing = GUARD + "\ndef test_l():\n    assert False, 'the project never runs this file'\n"
    files = {"test_kept.py": _tests("test_k"), "test_left_out.py": failing, "test_argued_out.py": failing}
    _suite(tmp_path, {**files, "test_dynamic_out.py": failing}, timings)
    conftest = tmp_path / "tests" / "conftest.py"
    rules = 'collect_ignore = ["test_left_out.py"]\ncollect_ignore_glob = ["test_dynamic" + "*.py"]\n'
    conftest.write_text(conftest.read_text() + rules)
    out = tmp_path / "results"
    argv = [sys.executable, "-m", "ci_shards", "local", "--discover", "--durations", "durations.json"]
    argv += ["--shards", "1", "--out", str(out), "--junit-out", "merged.xml"]
    argv += ["--pytest", "--", "tests", "--ignore", "tests/test_argued_out.py"]
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=180, env=env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plan = json.loads((out / "plan.json").read_text())
    planned = [i for s in plan["shards"] for i in s["items"]]
    assert sorted(planned) == ["tests/test_dynamic_out.py", "tests/test_kept.py"]
    assert "left out 1 path that conftest.py's collect_ignore names: tests/test_left_out.py" in plan["notes"]
    assert _ran(tmp_path, 1) == ["tests/test_kept.py::test_k"]
    skipped = [(c.file, c.message) for c in _cases(tmp_path, 1) if c.outcome is CaseOutcome.SKIPPED]
    assert skipped == [("tests/test_dynamic_out.py", f"skipped at collection: {IGNORED_REASON}")]
    # the shard's junit.xml accounts for the planned file; the merged report, as pytest's own, has the test only
    assert [c.test_id for c in parse_junit(tmp_path / "merged.xml")] == ["tests/test_kept.py::test_k"]


# A conftest that collects data files as tests, as Pygments' does (snippets/*.txt, examplefiles/*/*.py).
SAMPLES_CONFTEST = """
import pytest

def pytest_collect_file(parent, file_path):
    if file_path.suffix in (".txt", ".py") and file_path.name != "conftest.py":
        return Sample.from_parent(parent, path=file_path)

class Sample(pytest.File):
    def collect(self):
        yield SampleItem.from_parent(self, name="")

class SampleItem(pytest.Item):
    def runtest(self):
        assert self.path.read_text()
"""


@pytest.mark.parametrize("sample_seconds", [2.0, 0.5], ids=["named", "in-the-unowned-shards-walk"])
def test_data_files_a_conftest_collects_run_as_the_conftest_collects_them(
    tmp_path: Path, sample_seconds: float
) -> None:
    # a shard names its files on pytest's command line, where pytest would also take a .txt for a
    # doctest (this one fails as one) and any .py for a test module (this one cannot be imported);
    # the unowned shard (the lightest) meets its files in its walk of tests/, where the plugin itself
    # collects a planned .py that python_files does not match (t.py) as a module
    timings = {"tests/samples/session.txt::": 2.0, "tests/samples/sample.py::": sample_seconds}
    timings["tests/test_known.py::test_a"] = 1.0
    _suite(tmp_path, {"test_known.py": _tests("test_a")}, timings)
    samples = tmp_path / "tests" / "samples"
    samples.mkdir()
    (samples / "conftest.py").write_text(SAMPLES_CONFTEST)
    (samples / "session.txt").write_text(">>> 1 + 1\n3\n")
    (samples / "sample.py").write_text("raise RuntimeError('a sample to highlight, not a module')\n")
    code, output, plan = _run_local(tmp_path, 3)
    shard_of = {i: s["index"] for s in plan["shards"] for i in s["items"]}  # type: ignore[union-attr,index]
    assert len(set(shard_of.values())) == 3, plan  # one file a shard
    assert shard_of["tests/samples/session.txt"] != plan["unowned_shard"]
    assert (shard_of["tests/samples/sample.py"] == plan["unowned_shard"]) == (sample_seconds < 1), plan
    assert code == 0, output
    # the items are named "" (as pygments' snippet items are): pytest's own ids end in "::" (5397b12)
    expected = ["tests/samples/sample.py::", "tests/samples/session.txt::", "tests/test_known.py::test_a"]
    assert sorted(_ran(tmp_path, 3)) == expected  # each once, and no doctest nor module of the samples


def _plan_json(root: Path, how: str, shards: int) -> dict[str, Any]:
    argv = [sys.executable, "-m", "ci_shards", "plan", how, "--shards", str(shards), "--format", "json"]
    argv += ["--", "tests", "-p", "no:cacheprovider"]
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    plan: dict[str, Any] = json.loads(proc.stdout)
    return plan


@pytest.mark.slow
def test_with_no_timings_discovery_and_collection_plan_the_same_shape(tmp_path: Path) -> None:
    # files as real suites write them: parametrize over literals and a module-level name, classes
    # with inherited and nested test classes, a unittest case, and a file with no test (t is no test
    # name); 13 tests in files of 6, 4 and 3, two shards of 6 and 7 in both modes
    param = GUARD + "import pytest\nCASES = [1, 2, 3]\n\n@pytest.mark.parametrize('x', CASES)\n"
    param += "@pytest.mark.parametrize('y', [pytest.param(1, id='one'), 2])\ndef test_p(x, y):\n    pass\n"
    classes = GUARD + "class Base:\n    def test_base(self):\n        pass\n\n"
    classes += "class TestA(Base):\n    class TestNested:\n        def test_n(self):\n            pass\n\n"
    classes += "class TestB(TestA):\n    pass\n"
    cases = GUARD + "import unittest\n\nclass Checks(unittest.TestCase):\n"
    cases += "    def test_one(self):\n        pass\n\n    def test_two(self):\n        pass\n\n"
    cases += "    def test_three(self):\n        pass\n"
    files = {"test_param.py": param, "test_classes.py": classes, "test_cases.py": cases, "test_one.py": _tests("t")}
    _suite(tmp_path, files, {})
    collected = _plan_json(tmp_path, "--pytest", 2)
    discovered = _plan_json(tmp_path, "--discover", 2)
    per_file: dict[str, int] = {}
    for item in [i for s in collected["shards"] for i in s["items"]]:
        per_file[item.split("::")[0]] = per_file.get(item.split("::")[0], 0) + 1
    assert per_file == {"tests/test_param.py": 6, "tests/test_classes.py": 4, "tests/test_cases.py": 3}
    # no timings: each file dealt over the shards (docs/planning.md), a class whole in both modes; --pytest deals
    # the parametrized function's collected cases, discovery (no case ids in the text) keeps it, here its file, whole
    shard_of = {i: n for n, s in enumerate(collected["shards"]) for i in s["items"]}
    for scope in ("tests/test_cases.py::Checks", "tests/test_classes.py::TestA", "tests/test_classes.py::TestB"):
        assert len({n for i, n in shard_of.items() if i.startswith(scope + "::")}) == 1, scope
    assert len({n for i, n in shard_of.items() if i.startswith("tests/test_param.py::")}) == 2
    assert sorted(sorted(s["items"]) for s in discovered["shards"]) == [
        ["tests/test_cases.py", "tests/test_classes.py"],
        ["tests/test_one.py", "tests/test_param.py"],
    ]
    shapes = [sorted(s["estimated_seconds"] for s in p["shards"]) for p in (collected, discovered)]
    assert shapes == [[6.0, 7.0], [6.1, 7.0]]  # the file with no test: a tenth of one, its import
    assert "from the tests each defines (13 tests counted, 1 file with none" in "\n".join(discovered["notes"])


@pytest.mark.slow
def test_with_no_timings_both_modes_weigh_examples_and_deselected_tests_alike(tmp_path: Path) -> None:
    # the project's addopts deselect 2,000 stress cases (collected by the shard that runs their file,
    # never run), two hypothesis tests run 50 examples each, two plain files of 60 tests: by count
    # (main before issue 25's item 1) the stress file was 4 tests and the hypothesis file 2
    stress = GUARD + "import pytest\n\n@pytest.mark.stress\n@pytest.mark.parametrize('n', range(2000))\n"
    stress += "def test_stress(n):\n    pass\n" + "".join(f"\ndef test_{c}():\n    pass\n" for c in "abcd")
    given = GUARD + "from hypothesis import given, settings, strategies as st\n"
    given += "".join(f"\n@settings(max_examples=50)\n@given(st.integers())\ndef test_{c}(x):\n    pass\n" for c in "xy")
    plain = [_tests(*(f"test_{n}" for n in range(60))) for _ in range(2)]
    files = {"test_stress.py": stress, "test_given.py": given, "test_p1.py": plain[0], "test_p2.py": plain[1]}
    _suite(tmp_path, files, {})
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\ntestpaths = tests\naddopts = -m 'not stress'\nmarkers =\n    stress: long\n"
    )
    for how in ("--pytest", "--discover"):
        plan = _plan_json(tmp_path, how, 3)
        # 4 tests + 2,000 deselected at 0.05, 2 x 50 examples, 2 x 60 tests
        assert sum(s["estimated_seconds"] for s in plan["shards"]) == pytest.approx(104 + 100 + 120), how
        holding = [s for s in plan["shards"] if any(i.startswith("tests/test_stress.py") for i in s["items"])]
        assert len(holding) == 1, how  # each shard it is cut into would collect the 2,000 cases again
        assert holding[0]["estimated_seconds"] >= 104, how
        notes = "\n".join(plan["notes"])
        assert "2000 deselected tests at 0.05 test each" in notes or "2000 tests in 1 file that -m/-k" in notes, notes
        assert "2 hypothesis tests" in notes and "at 1 test per example" in notes, notes


@pytest.mark.slow
def test_the_timings_a_cut_run_wrote_plan_its_tests_again_not_its_parts(tmp_path: Path) -> None:
    # one file of two parametrized functions in two shards: the untimed plan cuts it into its parts
    # (tests/test_cut.py::test_a covers test_a[0] ... test_a[5]), and the timings that run writes hold
    # each part's sum beside its tests. Planned from them, a part was an item beside its own tests that
    # no test reports as: 2 errors, "planned but never reported" (marshmallow 4.4.0, conformance run 2)
    param = "import pytest\n" + "".join(
        f"\n@pytest.mark.parametrize('n', range(6))\ndef test_{c}(n):\n    pass\n" for c in "ab"
    )
    _suite(tmp_path, {"test_cut.py": GUARD + param}, {})
    tests = sorted(f"tests/test_cut.py::test_{c}[{i}]" for c in "ab" for i in range(6))
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    for n, flag in enumerate(("--timings-out", "--durations")):
        out = tmp_path / f"results{n}"
        argv = [sys.executable, "-m", "ci_shards", "local", "--discover", flag, "timings.json", "--shards", "2"]
        argv += ["--out", str(out), "--pytest", "--", "tests", "-p", "no:cacheprovider"]
        proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=180, env=env, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        plan = json.loads((out / "plan.json").read_text())
        items = sorted(i for s in plan["shards"] for i in s["items"])
        if n == 0:
            assert items == ["tests/test_cut.py::test_a", "tests/test_cut.py::test_b"]  # cut into its parts
        else:
            assert items == tests
        cases = [c for i in (1, 2) for c in parse_junit(out / f"shard-{i}-of-2" / "junit.xml")]
        assert sorted(c.test_id for c in cases) == tests
        assert {c.outcome for c in cases} == {CaseOutcome.PASSED}


SKIPS = "import pytest\n\npytest.skip('needs numpy', allow_module_level=True)\n"
MODULE_SKIP = SKIPS + "\n\ndef test_x():\n    pass\n"


@pytest.mark.slow
def test_a_shard_of_files_skipped_at_collection_passes_as_plain_pytest_does(tmp_path: Path) -> None:
    # plain pytest: "2 passed, 1 skipped", exit 0; the shard holding only the skipped module got
    # pytest's exit 5 (no tests collected) and failed with "zero tests executed"
    _suite(tmp_path, {"test_ok.py": _tests("test_a", "test_b"), "test_skip.py": GUARD + MODULE_SKIP}, {})
    rc, output, plan = _run_local(tmp_path, 2, timed=False)
    assert sorted(s["items"] for s in plan["shards"]) == [["tests/test_ok.py"], ["tests/test_skip.py"]]
    assert rc == 0, output
    # one skipped test, as pytest counts the module ("2 passed, 1 skipped"), which accounts for the planned file
    skipped = [c for c in _cases(tmp_path, 2) if c.outcome is CaseOutcome.SKIPPED]
    assert [(c.test_id, c.type) for c in skipped] == [("tests/test_skip.py", COLLECTOR_SKIPPED_TYPE)]
    assert "3 tests, 2 passed, 0 failed, 0 errors, 1 skipped" in output
    assert sorted(_ran(tmp_path, 2)) == ["tests/test_ok.py::test_a", "tests/test_ok.py::test_b"]
    # a module that skipped is in pytest's own --junitxml, and so in the merged report
    argv = [sys.executable, "-m", "ci_shards", "aggregate", "--plan", "results/plan.json", "results"]
    merged = subprocess.run([*argv, "--junit-out", "m.xml"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert merged.returncode == 0, merged.stderr
    assert sorted(c.test_id for c in parse_junit(tmp_path / "m.xml")) == [*_ran(tmp_path, 2), "tests/test_skip.py"]


@pytest.mark.slow
def test_a_file_under_a_folder_whose_conftest_skips_is_left_out_not_lost(tmp_path: Path) -> None:
    # babel 2.19.0's tests/benchmarks/conftest.py skips at module level without pytest-benchmark: plain
    # pytest collects nothing under it ("1 skipped"); the planned file there was "never reported"
    _suite(tmp_path, {"test_ok.py": _tests("test_a", "test_b")}, {})
    (tmp_path / "tests" / "bench").mkdir()
    (tmp_path / "tests" / "bench" / "conftest.py").write_text(GUARD + SKIPS)
    (tmp_path / "tests" / "bench" / "test_b.py").write_text(_tests("test_b"))
    rc, output, plan = _run_local(tmp_path, 2, timed=False)
    assert sorted(s["items"] for s in plan["shards"]) == [["tests/bench/test_b.py"], ["tests/test_ok.py"]]
    assert rc == 0, output
    left_out = {c.test_id: c.message for c in _cases(tmp_path, 2) if c.type == "ci-shards.left-out"}
    assert list(left_out) == ["tests/bench/test_b.py"]
    assert "needs numpy" in left_out["tests/bench/test_b.py"]
    assert sorted(_ran(tmp_path, 2)) == ["tests/test_ok.py::test_a", "tests/test_ok.py::test_b"]
    # the folder's collector is pytest's one skipped test, told by the shard that walks every folder only
    collectors = [c.test_id for c in _cases(tmp_path, 2) if c.type == COLLECTOR_SKIPPED_TYPE]
    assert collectors == ["tests/bench"]
    assert "3 tests, 2 passed, 0 failed, 0 errors, 1 skipped" in output


def _doctested(*names: str) -> str:
    """A module of the package: its own docstring and each function's hold an example, then the guard."""
    example = '\n\ndef {0}():\n    """\n    >>> {0}()\n    1\n    """\n    return 1\n'
    functions = "".join(example.format(name) for name in names)
    return '"""The module.\n\n>>> 1 + 1\n2\n"""\n' + GUARD + functions


@pytest.mark.slow
def test_with_doctest_modules_the_first_plan_plans_the_modules_that_hold_doctests(tmp_path: Path) -> None:
    # issue 25 on jaraco's skeleton (addopts --doctest-modules): discovery planned the test files only, so every
    # doctest of the package ran unplanned in the one shard that walks for unowned files
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --doctest-modules --doctest-glob=*.rst\n")
    files = {
        "pkg/__init__.py": "",
        "pkg/mod.py": _doctested("f"),
        "pkg/other.py": _doctested("g", "h", "i"),
        "pkg/plain.py": GUARD,
        "tests/test_a.py": _tests("test_a", "test_b"),
        "docs/guide.rst": "A guide.\n\n>>> 6 * 7\n42\n",  # a text file the doctest glob matches: one doctest
        "docs/plain.rst": "No example here.\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    out = tmp_path / "results"
    argv = [sys.executable, "-m", "ci_shards", "local", "--discover", "--shards", "2", "--out", str(out), "--pytest"]
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    done = subprocess.run([*argv, "--", "-p", "no:cacheprovider"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=180, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    plan = json.loads((out / "plan.json").read_text())
    planned = sorted(i for s in plan["shards"] for i in s["items"])
    # whole files: local deals no first plan over its shards, which share this working tree (docs/planning.md)
    assert planned == ["docs/guide.rst", "pkg/mod.py", "pkg/other.py", "tests/test_a.py"], plan
    assert not any("no test has a timing yet" in note for note in plan["notes"])
    assert "planned 2 modules for the doctests --doctest-modules collects from them (6 doctests counted" in " ".join(
        plan["notes"]
    )
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:ci_shards"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    collected = sorted(line for line in plain.stdout.splitlines() if "::" in line)
    assert len(collected) == 9  # 7 doctests and 2 tests: the comparison below is about them
    assert sorted(_ran(tmp_path, 2)) == collected  # each once, as plain pytest collects it


@pytest.mark.slow
@pytest.mark.parametrize(
    "words",
    [("tests/unit",), ("tests/test_b.py::TestC",), ("tests/test_b.py::TestC", "tests/unit/test_a.py::test_a[2]")],
    ids=["a-folder", "a-class", "node-ids"],
)
def test_a_run_narrowed_by_its_arguments_runs_what_plain_pytest_runs_beside_the_whole_suites_timings(
    tmp_path: Path, words: tuple[str, ...]
) -> None:
    # the timings of the whole suite, a run of part of it: planned, the other files' tests were never collected
    # by the shard that drew them, which failed ("planned but never reported"); a node id made discovery plan
    # nothing at all ("no tests to run")
    timings = {"tests/unit/test_a.py::test_a[1]": 1.0, "tests/unit/test_a.py::test_a[2]": 1.0}
    timings |= {"tests/test_b.py::test_b": 2.0, "tests/test_b.py::TestC::test_c": 2.0, "tests/test_d.py::test_d": 2.0}
    _suite(
        tmp_path,
        {
            "test_b.py": _tests("test_b") + "\nclass TestC:\n    def test_c(self):\n        pass\n",
            "test_d.py": _tests("test_d"),
        },
        timings,
    )
    (tmp_path / "tests" / "unit").mkdir()
    (tmp_path / "tests" / "unit" / "test_a.py").write_text(
        GUARD + "import pytest\n@pytest.mark.parametrize('x', [1, 2])\ndef test_a(x):\n    pass\n"
    )
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", *words],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    expected = sorted(line for line in plain.stdout.splitlines() if "::" in line)
    assert expected, plain.stdout
    for timed in (True, False):
        code, output, plan = _run_local(tmp_path, 2, timed=timed, words=words)
        assert code == 0, output
        assert sorted(_ran(tmp_path, int(plan["total"]))) == expected, output  # type: ignore[call-overload]


@pytest.mark.slow
def test_from_a_subfolder_the_shards_report_pytests_own_ids_and_their_timings_plan_from_either_folder(
    tmp_path: Path,
) -> None:
    # pyyaml 6.0.4's suite run from its tests/ folder (conformance runs 5 and 6): the same tests and counts as plain
    # pytest, but named from tests/ (test_a.py::test_a) where pytest names them from its rootdir (tests/test_a.py::...)
    _suite(tmp_path, {"test_a.py": _tests("test_a1", "test_a2"), "test_b.py": _tests("test_b")}, {})
    (tmp_path / "tests" / "unit").mkdir()
    (tmp_path / "tests" / "unit" / "test_c.py").write_text(_tests("test_c"))
    below = tmp_path / "tests"
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider"],
        cwd=below, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    expected = sorted(line for line in plain.stdout.splitlines() if "::" in line)
    assert expected == [
        "tests/test_a.py::test_a1",
        "tests/test_a.py::test_a2",
        "tests/test_b.py::test_b",
        "tests/unit/test_c.py::test_c",
    ]
    argv = [sys.executable, "-m", "ci_shards", "local", "--discover", "--shards", "2", "--pytest"]
    for cwd, timings in ((below, ["--timings-out", "../t.json"]), (tmp_path, ["--durations", "t.json"])):
        out = tmp_path / "results"
        proc = subprocess.run(
            [*argv, "--out", str(out), *timings], cwd=cwd, capture_output=True, text=True, timeout=180, check=False
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        plan = json.loads((out / "plan.json").read_text())
        assert plan.get("rootdir") == (".." if cwd == below else None)
        assert sorted(_ran(tmp_path, 2)) == expected
        assert plan["unknown_items"] == (3 if cwd == below else 0)  # 3 new files; then known
