"""The timings store: every input format, bad input, history, variants, merging."""

from __future__ import annotations

import json
import math

import pytest

from ci_shards.common.errors import InputError
from ci_shards.junit import parse_junit, parse_junit_bytes, write_junit
from ci_shards.timings.store import (
    HISTORY,
    STORE_SCHEMA,
    TimingsStore,
    load_timings,
    merge_stores,
    parse_timings_text,
)


def parse(text: str) -> TimingsStore:
    return parse_timings_text(text.encode(), "t.json")


def test_pytest_split_object():
    store = parse('{"a.py::t1": 1.5, "b.py::t2": 0.25}')
    assert store.estimates() == {"a.py::t1": 1.5, "b.py::t2": 0.25}
    assert store.warnings == ()


def test_pytest_split_list_of_pairs():
    store = parse('[["a.py::t1", 1.5], ["b.py::t2", 2]]')
    assert store.estimates() == {"a.py::t1": 1.5, "b.py::t2": 2.0}


@pytest.mark.parametrize("bad", ["-1", "NaN", "Infinity", '"slow"', "null", "true", "[1]"])
def test_unusable_values_are_skipped_and_counted(bad):
    store = parse(f'{{"a.py::t1": 1.0, "a.py::t2": {bad}}}')
    assert store.estimates() == {"a.py::t1": 1.0}
    assert len(store.warnings) == 1
    assert "skipped 1 unusable" in store.warnings[0]
    assert store.warnings[0].startswith("t.json:")


def test_duplicate_keys_last_wins_and_are_counted():
    store = parse('{"a.py::t": 1.0, "a.py::t": 3.0}')
    assert store.estimates() == {"a.py::t": 3.0}
    assert any("more than once" in w for w in store.warnings)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1,\n "b": }', "not valid JSON at line 2, column 7"),
        ("[1, 2]", "entry 0 is not a [nodeid, seconds] pair"),
        ('"just a string"', "expected a JSON object or list"),
        ("", "empty file"),
        ("   \n", "empty file"),
        ("<testsuite><testcase", "at line 1, column"),
        ("<html></html>", "not a JUnit report"),
        ('{"schema": "ci-shards/timings@9", "variants": {}}', "unsupported timings store schema"),
        ('{"schema": "ci-shards/timings@1", "variants": []}', "'variants' must be an object"),
    ],
)
def test_bad_input_names_file_and_problem(text, expected):
    with pytest.raises(InputError) as info:
        parse(text)
    assert str(info.value).startswith("t.json: ")
    assert expected in str(info.value)


def test_not_utf8():
    with pytest.raises(InputError, match="not UTF-8"):
        parse_timings_text(b'{"a": 1, "\xff": 2}', "t.json")


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read timings"):
        load_timings(tmp_path / "nope.json")


def test_junit_with_file_attribute_maps_to_node_ids():
    xml = """<?xml version="1.0"?>
<testsuites><testsuite name="pytest">
  <testcase classname="tests.test_a.TestK" name="test_m[1]" file="tests/test_a.py" time="1.25"/>
  <testcase classname="tests.test_a" name="test_f" time="0.5"/>
  <testcase classname="tests.test_a" name="test_f" time="0.25"/>
</testsuite></testsuites>"""
    store = parse(xml)
    assert store.estimates() == {"tests/test_a.py::TestK::test_m[1]": 1.25, "tests/test_a.py::test_f": 0.75}


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_a_junit_report_with_a_byte_order_mark_is_read_as_junit(encoding):
    # .NET's loggers write UTF-8 with a BOM (EnricoMi/publish-unit-test-result-action's xunit.xml)
    xml = '<?xml version="1.0" encoding="{}"?>\n<testsuite><testcase classname="a.B" name="t" time="2"/></testsuite>'
    data = xml.format("utf-8" if encoding == "utf-8-sig" else "utf-16").encode(encoding)
    assert data[:2] in (b"\xef\xbb", b"\xff\xfe", b"\xfe\xff")
    assert parse_timings_text(data, "r.xml").estimates() == {"a.B::t": 2.0}


def test_a_file_given_as_junit_is_read_as_xml_whatever_it_holds(tmp_path):
    path = tmp_path / "report.xml"
    path.write_text("This is not an xml file\n")
    with pytest.raises(InputError, match="not valid XML"):
        load_timings(path, junit=True)
    with pytest.raises(InputError, match="not valid JSON"):  # as --durations, a JSON file was expected
        load_timings(path)


def test_history_keeps_last_samples_and_estimate_is_median():
    store = TimingsStore()
    for value in [100.0, 1.0, 2.0, 3.0, 4.0, 5.0, 1000.0]:
        store = store.record({"t": value})
    assert store.variants[""]["t"] == (2.0, 3.0, 4.0, 5.0, 1000.0)
    assert len(store.variants[""]["t"]) == HISTORY
    assert store.estimates() == {"t": 4.0}  # an outlier does not win


def test_record_is_pure_and_skips_bad_values():
    base = TimingsStore().record({"t": 1.0})
    newer = base.record({"t": 3.0, "u": math.nan, "v": -2.0})
    assert base.estimates() == {"t": 1.0}
    assert newer.estimates() == {"t": 2.0}
    assert "skipped 2 unusable" in newer.warnings[-1]


def test_variant_falls_back_to_other_variants():
    store = TimingsStore().record({"a": 1.0, "b": 10.0}, variant="linux").record({"a": 5.0}, variant="macos")
    assert store.estimates("macos") == {"a": 5.0, "b": 10.0}
    assert store.estimates("linux") == {"a": 1.0, "b": 10.0}
    assert store.estimates("windows") == {"a": 3.0, "b": 10.0}  # pooled median of linux+macos
    assert store.estimates() == {"a": 3.0, "b": 10.0}


def test_dumps_round_trips_sorted_and_versioned():
    store = TimingsStore().record({"z.py::t": 1.0, "a.py::t": 2.0}).record({"a.py::t": 4.0}, variant="v1")
    text = store.dumps()
    data = json.loads(text)
    assert data["schema"] == STORE_SCHEMA
    assert list(data["variants"]) == ["", "v1"]
    assert list(data["variants"][""]) == ["a.py::t", "z.py::t"]
    assert text.endswith("\n")
    again = parse_timings_text(text.encode(), "store.json")
    assert again == store
    assert again.dumps() == text


def test_merge_concatenates_in_order_and_caps_history():
    a = TimingsStore(variants={"": {"t": (1.0, 2.0, 3.0)}})
    b = TimingsStore(variants={"": {"t": (4.0, 5.0, 6.0), "u": (7.0,)}})
    merged = merge_stores([a, b])
    assert merged.variants[""]["t"] == (2.0, 3.0, 4.0, 5.0, 6.0)
    assert merged.variants[""]["u"] == (7.0,)


def test_real_duration_files_all_load(real_data):
    for path in sorted((real_data / "durations").iterdir()):
        store = load_timings(path)
        assert len(store) > 10, path.name
        assert all(v >= 0 for v in store.estimates().values())


def test_real_list_format_and_duplicates(real_data):
    porespy = load_timings(real_data / "durations" / "PMEAL__porespy__.test_durations")
    assert "examples/filters/adding_chords.ipynb::Cell 0" in porespy.estimates()
    petting = load_timings(real_data / "durations" / "Farama-Foundation__PettingZoo__test__.test_durations")
    assert any("6 item(s) appear more than once" in w for w in petting.warnings)


def test_real_junit_files(real_data):
    junit = real_data / "junit"
    store = load_timings(junit / "mikepenz__action-junit-report__test_results__python__report.xml")
    assert store.estimates()
    with pytest.raises(InputError, match=r"non-xml\.xml"):
        load_timings(junit / "EnricoMi__publish-unit-test-result-action__python__test__files__xml__non-xml.xml")


def test_a_store_that_lost_its_schema_is_an_error_not_an_empty_timings_file():
    with pytest.raises(
        InputError, match=r"store.json: not a durations object: 1 of its values are objects, not seconds"
    ):
        # "history": 20 is a number, as a duration would be: one nested value is enough to tell
        parse_timings_text(b'{"variants": {"default": {"a::t": [1.0]}}, "history": 20}', "store.json")


def test_durations_over_a_day_are_skipped_with_a_count():
    store = parse('{"a::t": 1e30, "b::t": 86400.5, "c::t": 86400, "d::t": 2.0}')
    assert store.estimates() == {"c::t": 86400.0, "d::t": 2.0}
    assert any("skipped 2 unusable duration(s)" in w and "over a day" in w for w in store.warnings)


def test_an_implausible_junit_time_survives_the_shards_report_and_is_skipped(tmp_path):
    raw = b'<testsuite><testcase classname="a" name="t" time="1e30"/><testcase classname="a" name="u" time="3"/>'
    raw += b"</testsuite>"
    cases = parse_junit_bytes(raw, "raw.xml")
    assert [(c.time, c.time_invalid) for c in cases] == [(0.0, True), (3.0, False)]
    write_junit(cases, tmp_path / "shard.xml")  # what the runner writes for aggregate
    again = parse_junit(tmp_path / "shard.xml")
    assert [(c.time, c.time_invalid) for c in again] == [(0.0, True), (3.0, False)]
    store = load_timings(tmp_path / "shard.xml")
    assert store.estimates() == {"a::u": 3.0}
    assert any("skipped 1 unusable duration(s)" in w for w in store.warnings)


def test_unusable_junit_times_are_skipped_and_counted_not_stored_as_zero():
    # issue 2: negative, NaN or non-numeric durations are skipped and counted in a warning
    cases = "".join(
        f'<testcase classname="a" name="{name}" time="{raw}"/>'
        for name, raw in [("neg", "-1"), ("nan", "NaN"), ("word", "abc"), ("inf", "inf"), ("ok", "0.5")]
    )
    store = parse_timings_text(f"<testsuite>{cases}</testsuite>".encode(), "r.xml")
    assert store.estimates() == {"a::ok": 0.5}
    assert any("skipped 4 unusable duration(s)" in w for w in store.warnings)


def test_a_skipped_test_is_known_but_never_a_measurement():
    """A skipped test's ~0 s becomes a first sample only for a test the store has never seen: the next
    plan knows it, and a test that ran before keeps its history (a skip never pulls its median down)."""
    store = TimingsStore().record({"t.py::test_ran": 2.0})
    store = store.record({"t.py::test_other": 1.0}, known={"t.py::test_ran": 0.001, "t.py::test_new": 0.001})
    assert store.estimates() == {"t.py::test_new": 0.001, "t.py::test_other": 1.0, "t.py::test_ran": 2.0}
    again = store.record({}, known={"t.py::test_new": 0.0})
    assert again.variants[""]["t.py::test_new"] == (0.001,)  # known once, then left alone
    macos = store.record({}, variant="macos", known={"t.py::test_ran": 0.0})
    assert "t.py::test_ran" not in macos.variants["macos"]  # known in another variant is known
