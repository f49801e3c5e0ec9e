"""What pytest's collection arguments reach (plan/scope.py), and discovery held to it."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ci_shards.plan.scope import Scope, scope_of

CWD = Path("/work/proj")


def test_a_file_is_held_only_under_a_root():
    scope = scope_of([CWD / "tests/unit", CWD / "tests/test_b.py"], ["tests/unit", "tests/test_b.py"], CWD)
    assert scope.folders == ("tests/unit", "tests/test_b.py")
    assert scope.holds_file("tests/unit/test_a.py")
    assert scope.holds_file("tests/unit/deep/test_c.py")
    assert scope.holds_file("tests/test_b.py")
    assert not scope.holds_file("tests/test_c.py")
    assert not scope.holds_file("tests/unit_other/test_d.py")  # a prefix of the name is no folder above it
    assert not scope.holds_file("tests/test_b.py.orig")


def test_the_working_directory_holds_everything_and_a_root_outside_it_rules_nothing_out():
    assert scope_of([CWD], [], CWD).holds_file("any/test_x.py")
    outside = scope_of([CWD / "tests", Path("/elsewhere/pkg")], ["tests", "pkg"], CWD)
    assert outside.folders is None
    assert outside.holds_file("test_in_the_package.py")


def test_node_ids_keep_the_items_they_cover_and_those_covering_them():
    words = ["tests/test_b.py::TestC", "./tests/unit/test_a.py::test_a[1]"]
    roots = [CWD / "tests/test_b.py", CWD / "tests/unit/test_a.py"]
    scope = scope_of(roots, words, CWD)
    assert scope.node_ids == {
        "tests/test_b.py": ("tests/test_b.py::TestC",),
        "tests/unit/test_a.py": ("tests/unit/test_a.py::test_a[1]",),
    }
    kept = [
        "tests/test_b.py",  # the whole file: its pytest narrows to the ids
        "tests/test_b.py::TestC",
        "tests/test_b.py::TestC::test_c",
        "tests/test_b.py::TestC::test_d[x::y]",
        "tests/unit/test_a.py::test_a",  # a part covering the named case
        "tests/unit/test_a.py::test_a[1]",
    ]
    dropped = [
        "tests/test_b.py::test_b",
        "tests/test_b.py::TestCD::test_c",  # a longer class name is another class
        "tests/unit/test_a.py::test_a[2]",
        "tests/unit/test_a.py::test_a[10]",
        "tests/other.py::t",  # outside every root
    ]
    assert [i for i in kept + dropped if scope.keeps(i)] == kept


def test_a_file_named_whole_or_under_a_named_folder_is_not_narrowed_by_a_node_id_in_it():
    words = ["tests/test_b.py::TestC", "tests/test_b.py"]
    assert scope_of([CWD / "tests/test_b.py"], words, CWD).node_ids == {}
    words = ["tests", "tests/test_b.py::TestC"]
    assert scope_of([CWD / "tests"], words, CWD).node_ids == {}


_names = st.text("abc", min_size=1, max_size=3)


@given(st.lists(_names, min_size=1, max_size=3), st.lists(_names, min_size=1, max_size=3))
def test_every_item_under_a_folder_root_is_kept_and_no_item_outside_any(root_parts, item_parts):
    root = "/".join(root_parts)
    item = "/".join(item_parts) + ".py::test_x"
    scope = Scope(folders=(root,), node_ids={})
    under = f"{item}".startswith(f"{root}/")
    assert scope.keeps(item) == under
    assert scope.keeps(f"{root}/{item}")


def test_the_working_directory_holds_nothing_above_it():
    scope = scope_of([CWD], [], CWD)
    assert scope.holds_file("tests/test_a.py")
    assert not scope.holds_file("../docs/test_x.py")  # pytest's walk of the working directory never reaches it
