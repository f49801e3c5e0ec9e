"""Files whose tests depend on one another (pytest-dependency), read as text: plan/dependencies.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_shards.cli import main
from ci_shards.model.plan import Plan
from ci_shards.plan.dependencies import dependency_scopes, dependent_files

MARKED = b"""
import pytest

@pytest.mark.dependency()
def test_a():
    pass

@pytest.mark.dependency(depends=["test_a"])
def test_b():
    pass
"""


@pytest.mark.parametrize(
    ("source", "scopes"),
    [
        (MARKED, {"module"}),
        (
            b"from pytest import mark\n@mark.dependency(depends=['T::t'], scope='class')\ndef test_x(): pass\n",
            {"class"},
        ),
        (
            b"import pytest_dependency as d\ndef test_x(r):\n    d.depends(r, ['m.py::t'], scope='package')\n",
            {"package"},
        ),
        (b"from pytest_dependency import depends\ndef test_x(request):\n    depends(request, ['t'])\n", {"module"}),
        (b"@pytest.mark.dependency(depends=['t'], scope=SCOPE)\ndef test_x(): pass\n", {"session"}),  # unread: widest
        # a test others depend on, and nothing that depends: cut apart, nothing is skipped
        (b"import pytest\n@pytest.mark.dependency()\ndef test_a(): pass\n# depends on nothing\n", set()),
        (b"def test_depends_on_nothing(): pass\n", set()),
        (b"def test_x(:\n    depends(request, ['t'])\n", set()),  # does not parse: pytest will say so
        # pytest-order's relative marks (conformance run 8): a test name, a name with a file, a name not read
        (b"import pytest\n@pytest.mark.order(after='test_a')\ndef test_b(): pass\n", {"module"}),
        (b"from pytest import mark\n@mark.order(before=['T::t', 'test_c'])\ndef test_b(): pass\n", {"module"}),
        (b"@pytest.mark.order(after='test_other.py::test_a')\ndef test_b(): pass\n", {"session"}),
        (b"@pytest.mark.order(after=NAME)\ndef test_b(): pass\n", {"session"}),
        (b"@pytest.mark.order(1)\ndef test_b(): pass\n# after lunch\n", set()),  # an ordinal: no bond to cut
    ],
)
def test_the_scopes_a_file_declares(source: bytes, scopes: set[str]) -> None:
    assert dependency_scopes(source) == scopes


def test_only_python_files_that_declare_dependencies_are_kept_whole_and_other_scopes_named() -> None:
    texts = {
        "tests/test_dep.py": MARKED,
        "tests/test_across.py": b"def test_x(request):\n    depends(request, ['tests/t.py::t'], scope='session')\n",
        "tests/test_plain.py": b"def test_x(): pass\n",
        "tests/data.txt": MARKED,
    }
    found = dependent_files([*texts, "tests/test_gone.py", "tests/test_dep.py"], texts.get)
    assert found.whole == ("tests/test_across.py", "tests/test_dep.py")
    assert found.across == ("tests/test_across.py",)
    first, second = found.notes()
    assert "2 files whose tests depend on one another (pytest-dependency, pytest-order's before/after)" in first
    assert "kept whole" in first
    assert "tests in tests/test_across.py depend on other files' tests" in second and "--keep-together" in second
    assert dependent_files(["tests/test_plain.py"], texts.get).notes() == []


def test_a_discovery_plan_never_cuts_a_file_whose_tests_depend_on_one_another(tmp_path, monkeypatch, capsys) -> None:
    # cut apart, pytest-dependency skipped test_b in the shard without test_a: "2 passed, 2 skipped" under a green
    # verdict where plain pytest said "4 passed"
    monkeypatch.chdir(tmp_path)
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_dep.py").write_bytes(MARKED + b"\ndef test_c():\n    pass\n")
    (tests / "test_plain.py").write_text("def test_d():\n    pass\n")
    # 20 s over 2 shards: the dependent file's 15 s cut would balance them at 10 s each
    timings = {f"tests/test_dep.py::test_{t}": 5.0 for t in "abc"} | {"tests/test_plain.py::test_d": 5.0}
    Path("durations.json").write_text(json.dumps(timings))
    argv = ["plan", "--discover", "--durations", "durations.json", "--shards", "2", "--format", "json", "--", "tests"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    shards = sorted(s.items for s in Plan.from_json(json.loads(out)).shards)
    assert shards == [("tests/test_dep.py",), ("tests/test_plain.py",)]
    assert "1 file whose tests depend on one another (pytest-dependency, pytest-order's before/after) kept whole" in err
