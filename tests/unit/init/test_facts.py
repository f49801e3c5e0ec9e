"""``init.facts.read_facts`` on real folders: the walk for a file pytest collects by its default names."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_shards.init.facts import read_facts


def _files(root: Path, *paths: str) -> Path:
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("", encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("paths", "first"),
    [
        (["tests/test_a.py", "tests/unit/test_b.py"], "tests/test_a.py"),
        (["check_test.py"], "check_test.py"),
        (["_test.py"], "_test.py"),  # fnmatch's * matches nothing too
        (["a/helpers.py", "b/sub/test_x.py"], "b/sub/test_x.py"),
        (["tests/conftest.py", "tests/helpers.py", "test.py", "test_a.txt"], ""),
        # pytest's default norecursedirs and a virtualenv keep these out of its collection, so out of init's look
        ([".tox/py/test_a.py", "node_modules/x/test_a.py", "venv/test_a.py", "build/test_a.py", "x.egg/test_a.py"], ""),
        (["env/pyvenv.cfg", "env/lib/test_a.py"], ""),
    ],
)
def test_the_first_file_pytests_default_names_collect(tmp_path: Path, paths: list[str], first: str) -> None:
    assert read_facts(_files(tmp_path, *paths)).pytest_test_file == first


@pytest.mark.parametrize("marker", ["pyproject.toml", "setup.py", "package.json", "go.mod", "requirements-dev.txt"])
def test_no_walk_where_a_project_file_names_the_project(tmp_path: Path, marker: str) -> None:
    root = _files(tmp_path, "tests/test_a.py")
    (root / marker).write_text("{}" if marker == "package.json" else "", encoding="utf-8")
    assert read_facts(root).pytest_test_file == ""


@pytest.mark.parametrize(
    ("files", "gate"),
    [
        ({".coveragerc": "[report]\nfail_under = 50\n"}, (".coveragerc", "50")),  # propcache 0.5.4's
        ({".coveragerc": "[coverage:report]\nfail_under = 40\n"}, (".coveragerc", "40")),
        # coverage.py's own file is taken when present, so pyproject.toml's gate is not read
        (
            {".coveragerc": "[run]\nbranch = true\n", "pyproject.toml": "[tool.coverage.report]\nfail_under = 90\n"},
            None,
        ),
        ({".coveragerc.toml": "[report]\nfail_under = 30\n"}, (".coveragerc.toml", "30")),
        (
            {"setup.cfg": "[coverage:report]\nfail_under = 70\n", "tox.ini": "[coverage:report]\nfail_under = 60\n"},
            ("setup.cfg", "70"),
        ),
        # setup.cfg without a coverage section is passed over; its plain [report] is not coverage.py's
        (
            {"setup.cfg": "[report]\nfail_under = 10\n", "tox.ini": "[coverage:report]\nfail_under = 60\n"},
            ("tox.ini", "60"),
        ),
        ({"pyproject.toml": "[tool.coverage.report]\nfail_under = 85.5\n"}, ("pyproject.toml", "85.5")),
        ({"pyproject.toml": "[tool.coverage.run]\nbranch = true\n"}, None),
        ({"pyproject.toml": "[tool.other]\nfail_under = 5\n"}, None),
        ({}, None),
    ],
)
def test_the_coverage_gate_is_the_fail_under_coverage_py_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], gate: tuple[str, str] | None
) -> None:
    coverage = pytest.importorskip("coverage")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COVERAGE_RCFILE", raising=False)
    read_by_coverage = coverage.Coverage().get_option("report:fail_under")
    found = read_facts(tmp_path).coverage_gate
    assert found == (gate or ("", ""))
    assert float(found[1] or 0) == read_by_coverage  # the reference: coverage.py's own reading of these files


def test_an_unreadable_coverage_file_is_no_gate_and_no_error(tmp_path: Path) -> None:
    (tmp_path / ".coveragerc").write_bytes(b"[report]\nfail_under = \xff\n")
    assert read_facts(tmp_path).coverage_gate == ("", "")
