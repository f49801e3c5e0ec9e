"""groups.py: which failures are the same failure, and a fair sample across shards."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ci_shards.model.failures import FailureKind, FailureRecord
from ci_shards.report.groups import group_failures, message_of, normalise, round_robin


def _record(
    test_id: str, message: str, shard: int = 1, kind: FailureKind = FailureKind.FAILED, text: str = ""
) -> FailureRecord:
    return FailureRecord(shard=shard, test_id=test_id, kind=kind, message=message, text=text)


def test_normalise_masks_numbers_addresses_and_tmp_paths_but_not_names():
    a = normalise("ValueError: <Obj at 0x7f3a2b> got 17 (1.5s) in /tmp/pytest-of-u/pytest-3/test_a0/f.txt")
    b = normalise("ValueError: <Obj at 0x10ff> got 2 (0.25s) in /tmp/pytest-of-u/pytest-9/test_b1/f.txt")
    assert a == b == "ValueError: <Obj at <hex>> got N (Ns) in <tmp>"
    assert normalise(r"open C:\Users\me\AppData\Local\Temp\pytest-1\x") == "open <tmp>"
    assert normalise("/private/var/folders/ab/T/x 3") == "<tmp> N"
    assert normalise("Error1: x") != normalise("Error2: x")  # digits in a name are part of the name
    assert normalise("a\n  b") == "a b"


def test_groups_by_kind_type_and_message_largest_first():
    records = [
        _record("t1", "boom 1"),
        _record("t2", "other"),
        _record("t3", "boom 2", shard=2),
        _record("t4", "boom 3", kind=FailureKind.ERROR),
        _record("t5", "boom 4", shard=3),
    ]
    groups = group_failures(records, {"t5": "KeyError"})
    assert [[r.test_id for r in g.records] for g in groups] == [["t1", "t3"], ["t5"], ["t2"], ["t4"]]
    assert groups[0].count == 2
    assert groups[0].shards == [1, 2]


def test_groups_of_one_size_alternate_between_shards():
    records = [_record(f"s{s}-{i}", f"distinct {'abc'[i]} {'xy'[s - 1]}", shard=s) for s in (1, 2) for i in range(3)]
    assert [g.first.test_id for g in group_failures(records)] == ["s1-0", "s2-0", "s1-1", "s2-1", "s1-2", "s2-2"]


@given(st.lists(st.integers(min_value=1, max_value=5), max_size=60), st.integers(min_value=0, max_value=70))
def test_round_robin_is_fair(shards, limit):
    records = [_record(f"t{i}", "m", shard=s) for i, s in enumerate(shards)]
    sample = round_robin(records, limit)
    assert len(sample) == min(limit, len(records))
    assert len({r.test_id for r in sample}) == len(sample)
    counts = {s: sum(r.shard == s for r in sample) for s in set(shards)}
    available = {s: shards.count(s) for s in set(shards)}
    # no shard gets two more than another unless that other has nothing left to give
    for n in counts.values():
        for other, m in counts.items():
            assert n <= m + 1 or m == available[other]


def test_message_of_reads_the_text_when_the_message_says_nothing():
    jest_text = "Error: expect(received).toBe(expected)\n\nExpected: 9\nReceived: 10\n    at toBe (/r/a.test.js:7:3)"
    jest = _record("t", "", text=jest_text)
    assert message_of(jest) == "Error: expect(received).toBe(expected)\nExpected: 9\nReceived: 10"
    go_text = "=== RUN   TestPush/size1\n    queue_test.go:12: len = 2, want 1\n    --- FAIL: TestPush/size1 (0.00s)\n"
    go = _record("g", "Failed", text=go_text)
    assert message_of(go) == "queue_test.go:12: len = 2, want 1"
    assert message_of(_record("p", "assert 1 == 2")) == "assert 1 == 2"
    other = _record("h", "Failed", text="=== RUN   TestX\n")
    assert message_of(other) == "Failed"
    # two go failures with different messages are different failures, whatever gotestsum's message says
    assert len(group_failures([go, other])) == 2
