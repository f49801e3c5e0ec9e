"""Timings recorded under another root: suffix matching, --durations-root, the measured-only ratio."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci_shards.common.errors import UsageError
from ci_shards.plan.estimates import (
    describe_suffix_matches,
    match_by_suffix,
    match_timings,
    measured_ratio,
    rebase_keys,
)


def test_keys_recorded_inside_the_package_match_ids_from_the_repository_root() -> None:
    items = ["pkg/tests/test_a.py::T::t[1]", "pkg/tests/test_a.py::T::t[2]", "pkg/test_b.py::x"]
    keys = ["tests/test_a.py::T::t[1]", "tests/test_a.py::T::t[2]", "test_b.py::x", "test_b.py::gone"]
    matches = match_by_suffix(items, keys)
    assert matches == dict(zip(items, keys[:3], strict=True))
    assert describe_suffix_matches(matches) == "ids 'pkg/…' ↔ timings '…' (3)"
    # and the reverse: keys with a prefix the ids lack
    assert match_by_suffix(keys[:3], items) == dict(zip(keys[:3], items, strict=True))


def test_ambiguous_suffixes_and_contended_keys_are_not_matched() -> None:
    # two keys share the item's longest suffix: ambiguous
    assert match_by_suffix(["t/test_a.py::x"], ["a/t/test_a.py::x", "b/t/test_a.py::x"]) == {}
    # the longer suffix wins when it is unique
    assert match_by_suffix(["x/t/test_a.py::x"], ["a/t/test_a.py::x", "x/test_a.py::x"]) == {
        "x/t/test_a.py::x": "a/t/test_a.py::x"
    }
    # two items would take one key: neither does
    assert match_by_suffix(["a/test_a.py::x", "b/test_a.py::x"], ["test_a.py::x"]) == {}
    # a key that is some item's own id is never given to another item
    assert match_by_suffix(["test_a.py::x", "p/test_a.py::x"], ["test_a.py::x"]) == {}
    # the part after the file must be equal, and the file name
    assert match_by_suffix(["p/test_a.py::x"], ["test_a.py::y", "test_b.py::x"]) == {}


_PART = st.sampled_from(["a", "b", "pkg", "tests", "src"])
_FILE = st.lists(_PART, min_size=0, max_size=3).map(lambda parts: "/".join([*parts, "test_m.py"]))
_ID = st.tuples(_FILE, st.sampled_from(["", "::t", "::T::t[1]", "::t[a::b]"])).map("".join)


@given(items=st.lists(_ID, unique=True, max_size=12), keys=st.sets(_ID, max_size=12))
def test_suffix_matching_never_maps_two_ids_to_one_key_nor_an_ambiguous_suffix(
    items: list[str], keys: set[str]
) -> None:
    matches = match_by_suffix(items, keys)
    assert len(set(matches.values())) == len(matches)  # one key, one id
    for item, key in matches.items():
        assert item not in keys  # an id with a timing of its own keeps it
        assert key not in items  # another id's own timing is never taken
        file, _, rest = item.partition("::")
        key_file, _, key_rest = key.partition("::")
        assert rest == key_rest and file.split("/")[-1] == key_file.split("/")[-1]
        score = _suffix(file, key_file)
        rivals = [k for k in keys - {key} - set(items) if k.partition("::")[2] == rest]
        assert all(_suffix(file, k.partition("::")[0]) < score for k in rivals)  # unambiguous


def _suffix(a: str, b: str) -> int:
    pa, pb = a.split("/"), b.split("/")
    n = 0
    while n < min(len(pa), len(pb)) and pa[-1 - n] == pb[-1 - n]:
        n += 1
    return n


def test_durations_root_rebases_keys_onto_the_ids_root() -> None:
    durations = {"tests/t.py::x": 1.0, "t.py": 2.0}
    assert rebase_keys(durations, durations_root="pkg", ids_root=".") == {"pkg/tests/t.py::x": 1.0, "pkg/t.py": 2.0}
    assert rebase_keys({"pkg/t.py::x": 1.0}, durations_root=".", ids_root="pkg") == {"t.py::x": 1.0}
    assert rebase_keys({"t.py::x": 1.0}, durations_root="a", ids_root="a/b") == {"../t.py::x": 1.0}


def test_match_timings_remaps_says_how_and_refuses_what_still_does_not_match() -> None:
    items = [f"pkg/tests/test_{n}.py::t" for n in range(4)]
    recorded = {f"tests/test_{n}.py::t": float(n + 1) for n in range(4)}
    estimates, note = match_timings(items, recorded, allow_unmatched=False)
    assert [estimates[i] for i in items] == [1.0, 2.0, 3.0, 4.0]
    assert note.startswith("4 of 4 items had no timing under their own id and were matched")
    assert "ids 'pkg/…' ↔ timings '…' (4)" in note
    # most items already matched, or few keys (a suite that grew): left to the usual estimates
    mostly_own = {**{i: 1.0 for i in items[:3]}, "tests/test_3.py::t": 1.0}
    assert match_timings(items, mostly_own, allow_unmatched=False) == (mostly_own, "")
    few = {"tests/test_0.py::t": 1.0}
    assert match_timings(items, few, allow_unmatched=False) == (few, "")
    assert match_timings(items, {}, allow_unmatched=False) == ({}, "")
    # file items own their tests' timings: matched, not re-mapped (how they are estimated is not decided here)
    files = [f"tests/test_{n}.py" for n in range(4)]
    assert match_timings(files, recorded, allow_unmatched=False) == (recorded, "")
    unrelated = {f"other_{n}.py::t": 1.0 for n in range(4)}
    with pytest.raises(
        UsageError, match=r"^only 0 of 4 items match a timing, even by path suffix .*--durations-root DIR"
    ):
        match_timings(items, unrelated, allow_unmatched=False)
    assert match_timings(items, unrelated, allow_unmatched=True) == (unrelated, "")


def test_measured_ratio_counts_only_measured_seconds() -> None:
    assert measured_ratio([["a", "b"], ["c"]], {"a": 1.0, "b": 1.0, "c": 2.0}) == 1.0
    assert measured_ratio([["a", "x"], ["y"]], {"a": 4.0}) == 1.0  # one measured item: its own lower bound
    assert measured_ratio([["a", "b"], ["c"]], {"a": 3.0, "b": 3.0, "c": 2.0}) == 6.0 / 4.0
    assert measured_ratio([["x"], ["y"]], {}) is None
