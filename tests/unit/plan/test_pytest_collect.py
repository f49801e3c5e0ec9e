"""Reading the plugin's collection record: pytest's own ids, refused when a shard could not run them again."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_shards.common.errors import CollectionError
from ci_shards.model.plan import Granularity, Plan, ShardPlan
from ci_shards.plan.pytest_collect import Collection, error_line, portable_rootdir, read_collection


def _record(*items: tuple[str, str], errors: list[dict[str, str]] | None = None) -> dict[str, object]:
    return {"rootdir": "/r", "items": [{"id": i, "path": p} for i, p in items], "errors": errors or []}


def test_ids_come_back_in_pytest_order_with_the_rootdir() -> None:
    record = _record(("t/test_b.py::x[a::b]", "/r/t/test_b.py"), ("../o/test_a.py::y", "/o/test_a.py"))
    record["deselected"] = {"t/test_b.py": 3}  # collected, then -m/-k took them away
    assert read_collection(record, exit_code=0) == Collection(
        ids=["t/test_b.py::x[a::b]", "../o/test_a.py::y"],
        rootdir="/r",
        paths={"t/test_b.py": "/r/t/test_b.py", "../o/test_a.py": "/o/test_a.py"},
        deselected={"t/test_b.py": 3},
    )
    assert read_collection(_record(), exit_code=5).ids == []  # "no tests collected" is an empty plan, not an error


def test_a_failed_collector_is_named_with_its_one_line_reason() -> None:
    errors = [{"id": "t/test_bad.py", "message": "ModuleNotFoundError: No module named 'nope'"}, {"id": "x"}]
    with pytest.raises(CollectionError) as err:
        read_collection(_record(errors=errors), exit_code=2)
    assert str(err.value) == (
        "pytest collection failed (exit 2) in t/test_bad.py: ModuleNotFoundError: No module named 'nope'"
        " (and 1 more); no plan was made"
    )


def test_a_failed_collector_pytest_runs_past_is_planned_around_and_noted() -> None:
    # --continue-on-collection-errors, or pytest-xdist in addopts (yarl 1.25.1's -n auto, conformance run 10): plain
    # pytest runs the tests it collected and reports the error, so the plan has those tests
    errors = [{"id": "t/test_bad.py", "message": "ModuleNotFoundError: No module named 'nope'"}]
    record = _record(("t/test_a.py::x", "/r/t/test_a.py"), errors=errors) | {"runs_past_errors": "pytest-xdist"}
    for exit_code in (1, 2):  # --collect-only exits 1 past the errors; 2 where xdist, inert, left pytest to stop
        found = read_collection(record, exit_code=exit_code)
        assert found.ids == ["t/test_a.py::x"]
        assert found.errors_run_past == ("t/test_bad.py: ModuleNotFoundError: No module named 'nope'",)
    assert found.run_past_note().startswith(
        "pytest's collection reported 1 error (t/test_bad.py: ModuleNotFoundError: No module named 'nope'), which it"
    )
    assert read_collection(_record(("t/test_a.py::x", "/r/t/test_a.py")), exit_code=0).run_past_note() == ""
    with pytest.raises(CollectionError, match=r"exit 4, usage error"):
        read_collection(record, exit_code=4)
    with pytest.raises(CollectionError, match=r"in t/test_bad.py: ModuleNotFoundError"):  # nothing runs past it
        read_collection(record | {"runs_past_errors": ""}, exit_code=2)


def test_exit_1_set_by_a_plugin_after_a_clean_collection_still_plans() -> None:
    # syrupy's unused-snapshot check fails `pytest --collect-only` (no test ran, every snapshot unused): the
    # exit status pytest itself handed pytest_sessionfinish was 0 (conformance run 8)
    record = _record(("t/test_a.py::x", "/r/t/test_a.py")) | {"exitstatus": 0}
    assert read_collection(record, exit_code=1).ids == ["t/test_a.py::x"]
    with pytest.raises(CollectionError, match=r"exit 1, error"):  # pytest's own exit 1: not ours to excuse
        read_collection(_record(("t/test_a.py::x", "/r/t/test_a.py")) | {"exitstatus": 1}, exit_code=1)
    with pytest.raises(CollectionError, match=r"exit 4, usage error"):  # only the exit 1 of a check
        read_collection(record | {"exitstatus": 0}, exit_code=4)


def test_a_failing_exit_without_a_failed_collector_is_an_error() -> None:
    with pytest.raises(CollectionError, match=r"exit 4, usage error"):
        read_collection(_record(("t.py::a", "/r/t.py")), exit_code=4)


def test_an_id_collected_more_than_once_is_planned_once() -> None:
    # items sharing a node id (pyyaml 6.0.4's legacy tests): the id selects them all, in one shard
    record = _record(("t.py::a", "/r/t.py"), ("t.py::b", "/r/t.py"), ("t.py::a", "/r/t.py"))
    assert read_collection(record, exit_code=0).ids == ["t.py::a", "t.py::b"]


def test_an_id_that_does_not_name_its_file_is_refused_naming_the_first() -> None:
    record = _record(("t.py::a", "/r/t.py"), ("c", "/x"), ("d.py::e", "/r/other/f.py"))
    with pytest.raises(CollectionError, match=r"node id 'c' does not name its file /x"):
        read_collection(record, exit_code=0)


def test_a_file_reached_through_a_symlinked_folder_is_named_by_the_link(tmp_path: Path) -> None:
    # pytest follows tests/linked -> ../real/sub and names the file by the link; the recorder resolves the path
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "test_r.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "linked").symlink_to(Path("..") / "real" / "sub")
    real = str(tmp_path / "real" / "sub" / "test_r.py")
    record = _record(("tests/linked/test_r.py::test_r", real)) | {"rootdir": str(tmp_path)}
    assert read_collection(record, exit_code=0).ids == ["tests/linked/test_r.py::test_r"]
    with pytest.raises(CollectionError, match="does not name its file"):  # a link elsewhere names no such file
        read_collection(_record(("tests/other/test_r.py::test_r", real)) | {"rootdir": str(tmp_path)}, exit_code=0)


def test_a_file_outside_rootdir_is_named_relative_to_its_collection_argument() -> None:
    # --pyargs pkg.sub from another folder: pytest names the file relative to the package's folder
    record = _record(("tests/test_x.py::b", "/site/pkg/sub/tests/test_x.py"))
    assert read_collection(record, exit_code=0).ids == ["tests/test_x.py::b"]


def test_a_module_given_as_a_collection_argument_outside_rootdir_is_named_by_its_path_from_rootdir() -> None:
    # --pyargs pkg.a.tests.test_a pkg.b.tests.test_b from another folder (mpmath 1.4.1's test modules): pytest names
    # each module "" and so both files' tests ``::test_same[0]``; the shards name the file by its path from rootdir
    record = _record(
        ("::test_same[0]", "/site/pkg/a/tests/test_a.py"),
        ("::test_a", "/site/pkg/a/tests/test_a.py"),
        ("::test_same[0]", "/site/pkg/b/tests/test_b.py"),
    )
    collection = read_collection(record, exit_code=0)
    assert collection.ids == [
        "../site/pkg/a/tests/test_a.py::test_same[0]",
        "../site/pkg/a/tests/test_a.py::test_a",
        "../site/pkg/b/tests/test_b.py::test_same[0]",
    ]
    assert collection.paths["../site/pkg/b/tests/test_b.py"] == "/site/pkg/b/tests/test_b.py"


def test_portable_rootdir_is_relative_to_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert portable_rootdir(str(tmp_path), tmp_path) == "."
    assert portable_rootdir(str(tmp_path), tmp_path / "sub") == ".."
    assert portable_rootdir(str(tmp_path / "sub"), tmp_path) == "sub"


def test_the_plan_keeps_its_rootdir_and_plans_without_one_keep_their_digest() -> None:
    plain = Plan(
        total=1,
        granularity=Granularity.FILE,
        shards=(ShardPlan(1, ("a.py",), 1.0),),
        lower_bound_seconds=1.0,
        unknown_items=0,
    )
    assert "rootdir" not in plain.to_json()
    rooted = Plan.from_json({**plain.to_json(), "rootdir": "..", "digest": None})
    assert rooted.rootdir == ".."
    assert Plan.from_json(rooted.to_json()) == rooted
    assert rooted.digest != plain.digest
    with pytest.raises(ValueError, match="'rootdir' must be a string"):
        Plan.from_json({**plain.to_json(), "rootdir": 3, "digest": None})


def test_a_failure_no_collector_reported_is_named_from_pytests_output() -> None:
    usage = (
        "ERROR: usage: python -m pytest [options]\n"
        "python -m pytest: error: unrecognized arguments: --y\n"
        "  rootdir: /r\n"
    )
    assert error_line(usage) == "python -m pytest: error: unrecognized arguments: --y"
    assert error_line("\nERROR: module or package not found: nope (missing __init__.py?)\n\n") == (
        "module or package not found: nope (missing __init__.py?)"
    )
    assert error_line("") == ""
    with pytest.raises(CollectionError) as err:
        read_collection(_record(), exit_code=4, output="ERROR: file or directory not found: gone/\n")
    assert str(err.value) == (
        "pytest collection failed (exit 4, usage error): file or directory not found: gone/; no plan was made"
    )
