"""The JUnit reader over every real report in tests/data/junit, the variants it must accept, and
the writer/merger round trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from junitparser.xunit2 import JUnitXml
from lxml import etree

import ci_shards.junit as junit_writer
from ci_shards.junit import (
    JUnitError,
    expand_patterns,
    parse_junit,
    parse_junit_bytes,
    parse_time,
    read_many,
    write_junit,
    write_junit_suites,
)
from ci_shards.model.outcome import LEFT_OUT_TYPE, XFAILED_TYPE, XPASSED_TYPE, Attempt, CaseOutcome, CaseResult
from ci_shards.report.aggregate import Totals

P = "EnricoMi__publish-unit-test-result-action__python__test__files__"
# file -> (tests, passed, failed, errors, skipped, flaky). Counted by hand from the files, and
# cross-checked against junitparser.xunit2 (which counts the same per test case).
EXPECTED = {
    f"{P}junit-xml__jest__jest-junit.xml": (2, 2, 0, 0, 0, 0),
    f"{P}junit-xml__minimal-attributes.xml": (4, 1, 1, 1, 1, 0),
    f"{P}junit-xml__no-cases.xml": (0, 0, 0, 0, 0, 0),
    f"{P}junit-xml__pytest__junit.fail.xml": (5, 3, 1, 0, 1, 0),
    f"{P}junit-xml__testsuite-in-testsuite.xml": (5, 5, 0, 0, 0, 0),
    f"{P}junit-xml__testsuite-root.xml": (5, 5, 0, 0, 0, 0),
    f"{P}junit-xml__xunit__xunit.xml": (2, 2, 0, 0, 0, 0),  # says tests="173"
    "apache__maven-surefire__surefire-report-parser__src__test__resources__fixture__testsuitexmlparser__"
    "TEST-org.apache.maven.surefire.test.FailingTest.xml": (2, 0, 2, 0, 0, 0),
    "dorny__test-reporter____tests____fixtures__external__java__junit4-complete.xml": (8, 5, 1, 1, 1, 0),
    # and 1 xfailed, a count of its own as pytest says it
    "dorny__test-reporter____tests____fixtures__python-xunit-pytest.xml": (10, 6, 2, 0, 1, 0),
    "gotestyourself__gotestsum__internal__junitxml__testdata__junitxml-report.golden": (60, 42, 13, 0, 5, 0),
    "jenkinsci__junit-plugin__src__test__resources__hudson__tasks__junit__JENKINS-48583__TESTS-TestSuites.xml": (
        3,
        3,
        0,
        0,
        0,
        0,
    ),
    # says tests="3" failures="2": one test that failed twice, then passed
    "jenkinsci__junit-plugin__src__test__resources__hudson__tasks__junit__gh-237__TEST-io.olamy.FlakyTest.xml": (
        1,
        1,
        0,
        0,
        0,
        1,
    ),
    "jenkinsci__junit-plugin__src__test__resources__hudson__tasks__junit__"
    "junit-report-testsuite-various-timestamps.xml": (12, 12, 0, 0, 0, 0),
    "jstemmer__go-junit-report__testdata__001-report.xml": (5, 2, 1, 0, 2, 0),
    "mikepenz__action-junit-report__test_results__junit_flaky_failure__mixed_flaky_and_passed.xml": (3, 3, 0, 0, 0, 1),
    "mikepenz__action-junit-report__test_results__nested__junit.xml": (5, 2, 3, 0, 0, 0),
    # container-structure-test: time="999638317" (nanoseconds written as seconds) is over a day, so 0 s
    "mikepenz__action-junit-report__test_results__container-structure__test.xml": (3, 3, 0, 0, 0, 0),
    "mikepenz__action-junit-report__test_results__nextest__basic.xml": (3, 2, 1, 0, 0, 0),
    "mikepenz__action-junit-report__test_results__python__report.xml": (3, 1, 2, 0, 0, 0),
    "weiwei__junitparser__tests__data__jenkins.xml": (3, 1, 1, 0, 1, 0),
    # googletest: its 3 DISABLED_ tests (status="notrun" result="suppressed") never ran, so they are skipped,
    # as its suites' disabled="3" says (junitparser, reading no <skipped> element, counts them as passed)
    "aorura__gtest_0720__test_detail.xml": (8, 5, 0, 0, 3, 0),
}
EXPECTED_ERRORS = {f"{P}xml__non-xml.xml": "not valid XML"}


def _totals(cases):
    t = Totals.of(cases)
    return (t.tests, t.passed, t.failed, t.errors, t.skipped, t.flaky)


def test_every_shared_file_is_expected(real_data):
    names = {p.name for p in (real_data / "junit").iterdir()}
    assert names == set(EXPECTED) | set(EXPECTED_ERRORS), "a new file in tests/data/junit needs expectations"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_shared_file_totals(real_data, name):
    path = real_data / "junit" / name
    cases = parse_junit(path)
    assert _totals(cases) == EXPECTED[name]
    ids = [c.test_id for c in cases]
    assert all(ids)


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
def test_shared_file_errors_name_the_file(real_data, name):
    with pytest.raises(JUnitError) as err:
        parse_junit(real_data / "junit" / name)
    assert name in str(err.value)
    assert EXPECTED_ERRORS[name] in str(err.value)


def test_shared_pytest_ids_and_scoped_ids(real_data):
    junit = real_data / "junit"
    pytest_ids = [c.test_id for c in parse_junit(junit / f"{P}junit-xml__pytest__junit.fail.xml")]
    assert "test/test_spark.py::SparkTests::test_rsh_events" in pytest_ids
    nested = [c.test_id for c in parse_junit(junit / "mikepenz__action-junit-report__test_results__nested__junit.xml")]
    assert nested == ["TestA::A", "TestA::B", "TestB::A", "TestB::B", "packet::A"]  # document order, told apart
    jest = [c.test_id for c in parse_junit(junit / f"{P}junit-xml__jest__jest-junit.xml")]
    assert jest == ["widget.test.js::Load widget via link", "widget.test.js::Mount iframe"]


def test_shared_surefire_flaky_attempts(real_data):
    path = (
        real_data
        / "junit"
        / ("jenkinsci__junit-plugin__src__test__resources__hudson__tasks__junit__gh-237__TEST-io.olamy.FlakyTest.xml")
    )
    (case,) = parse_junit(path)
    assert case.flaky
    assert len(case.attempts) == 2
    assert all(a.outcome is CaseOutcome.FAILED for a in case.attempts)
    assert "AssertionError" in case.attempts[0].text or case.attempts[0].type


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        ("0.001", 0.001),
        ("1E-07", 1e-07),
        ("1,234.567", 1234.567),
        ("0,5", 0.5),
        ("NaN", 0.0),
        ("", 0.0),
        ("-3", 0.0),
        ("inf", 0.0),
        ("abc", 0.0),
        ("12", 12.0),
    ],
)
def test_parse_time(raw, seconds):
    assert parse_time(raw) == pytest.approx(seconds)


def _one(xml: str) -> CaseResult:
    (case,) = parse_junit_bytes(xml.encode(), "t.xml")
    return case


def test_bare_testsuite_root_comma_decimal_and_missing_attributes():
    case = _one('<testsuite><testcase name="t" time="0,25"/></testsuite>')
    assert case.time == 0.25
    assert case.outcome is CaseOutcome.PASSED
    assert _one("<testsuites><testcase/></testsuites>").test_id == ""  # nothing to name it: still counted


def test_several_results_most_severe_wins():
    xml = (
        '<testsuite><testcase name="t"><skipped/><failure message="f">x</failure><error message="e"/>'
        "</testcase></testsuite>"
    )
    case = _one(xml)
    assert case.outcome is CaseOutcome.ERROR
    assert case.message == "e"
    jest = '<testsuite><testcase name="t"><failure>one</failure><failure>two</failure></testcase></testsuite>'
    assert _one(jest).outcome is CaseOutcome.FAILED


def test_rerun_failure_keeps_attempts_and_fails():
    xml = (
        '<testsuite><testcase name="t"><failure message="first"/>'
        '<rerunFailure message="second" type="AssertionError"><stackTrace>trace 2</stackTrace></rerunFailure>'
        '<rerunError message="third">plain text</rerunError></testcase></testsuite>'
    )
    case = _one(xml)
    assert case.outcome is CaseOutcome.FAILED
    assert not case.flaky
    assert [a.outcome for a in case.attempts] == [CaseOutcome.FAILED, CaseOutcome.ERROR]
    assert case.attempts[0].text == "trace 2"
    assert case.attempts[1].text == "plain text"


def test_disabled_status_is_skipped_and_duration_attribute():
    case = _one('<testsuite><testcase name="t" status="disabled" duration="2.5"/></testsuite>')
    assert case.outcome is CaseOutcome.SKIPPED
    assert case.time == 2.5


def test_entities_and_cdata_and_bom():
    xml = (
        '\ufeff<?xml version="1.0"?><testsuite><testcase name="a &amp; b &#x263A;">'
        "<failure><![CDATA[x < y]]></failure></testcase></testsuite>"
    )
    case = _one(xml)
    assert case.name == "a & b \u263a"
    assert case.text == "x < y"


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>',
        '<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>',
        '<!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]>',
    ],
)
def test_entity_declarations_are_refused(doctype):
    xml = f'<?xml version="1.0"?>{doctype}<testsuite><testcase name="&b;"/></testsuite>'
    with pytest.raises(JUnitError, match="entities"):
        parse_junit_bytes(xml.encode(), "evil.xml")


def test_huge_text_node_is_capped_not_fatal():
    big = "x" * (12 * 1024 * 1024)
    case = _one(f'<testsuite><testcase name="t"><failure message="m">{big}</failure></testcase></testsuite>')
    assert case.outcome is CaseOutcome.FAILED
    assert len(case.text) < 70 * 1024
    assert "characters cut" in case.text


def test_deep_nesting_does_not_overflow():
    depth = 5000
    xml = "<testsuites>" + "<testsuite>" * depth + '<testcase name="deep"/>' + "</testsuite>" * depth + "</testsuites>"
    assert _one(xml).name == "deep"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "empty file"),
        (b"   \n", "empty file"),
        (b"<testsuites><testsuite><testcase name='x'>", "not valid XML"),  # killed mid-write
        (b"<html><body/></html>", "not a JUnit report (root element <html>)"),
        (b"<testsuite><testcase name='\xff\xfe'/></testsuit>", "not valid XML"),  # bad bytes recovered, bad XML not
    ],
)
def test_unreadable_reports_name_the_problem(data, problem):
    with pytest.raises(JUnitError) as err:
        parse_junit_bytes(data, "shard-3/junit.xml")
    assert str(err.value).startswith("shard-3/junit.xml: ")
    assert problem in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(JUnitError, match="cannot read"):
        parse_junit(tmp_path / "nope.xml")


def test_control_and_ansi_characters_stripped():
    case = _one(
        '<testsuite><testcase name="t"><failure message="\x1b[31mred\x1b[0m">a&#27;[1mb&#x1;c</failure>'
        "</testcase></testsuite>"
    )
    assert case.message == "red"
    assert case.text == "abc"


def test_write_read_round_trip(tmp_path):
    attempt = Attempt(outcome=CaseOutcome.FAILED, message="first", text="tb", time=0.2)
    cases = [
        CaseResult(
            test_id="tests/test_a.py::TestK::test_x[1]",
            name="test_x[1]",
            classname="tests.test_a.TestK",
            file="tests/test_a.py",
            time=1.25,
        ),
        CaseResult(
            test_id="tests/test_a.py::test_f",
            name="test_f",
            classname="tests.test_a",
            file="tests/test_a.py",
            outcome=CaseOutcome.FAILED,
            message="assert 1 == 2",
            text="Traceback\n  boom",
            attempts=(attempt,),
        ),
        CaseResult(
            test_id="tests/test_b.py::test_flaky",
            name="test_flaky",
            classname="tests.test_b",
            file="tests/test_b.py",
            attempts=(attempt,),
        ),
        CaseResult(
            test_id="tests/test_b.py::test_s",
            name="test_s",
            classname="tests.test_b",
            file="tests/test_b.py",
            outcome=CaseOutcome.SKIPPED,
            message="no db",
        ),
        CaseResult(
            test_id="tests/test_b.py::test_e",
            name="test_e",
            classname="tests.test_b",
            file="tests/test_b.py",
            outcome=CaseOutcome.ERROR,
            message="fixture",
        ),
    ]
    path = tmp_path / "out.xml"
    write_junit(cases, path, suite_name="shard-1")
    back = parse_junit(path)
    assert [c.test_id for c in back] == [c.test_id for c in cases]
    assert [c.outcome for c in back] == [c.outcome for c in cases]
    assert [c.flaky for c in back] == [False, False, True, False, False]
    assert back[1].attempts[0].message == "first"
    assert back[1].message == "assert 1 == 2"
    text = path.read_text()
    assert 'tests="5" failures="1" errors="1" skipped="1"' in text
    assert "<flakyFailure" in text
    assert "<rerunFailure" in text


def test_merge_many_recounts_and_reports_bad_files(tmp_path, real_data):
    good = sorted(p for p in (real_data / "junit").iterdir() if p.name in EXPECTED)
    bad = tmp_path / "broken.xml"
    bad.write_text("<testsuite>")
    suites, errors = read_many([*good, bad])
    assert [e.path for e in errors] == [str(bad)]
    out = tmp_path / "merged.xml"
    write_junit_suites(suites, out, name="merged")
    merged = parse_junit(out)
    want = [sum(v[i] for v in EXPECTED.values()) for i in range(6)]
    assert list(_totals(merged)) == want
    head = out.read_text()[:400]
    assert f'tests="{want[0]}"' in head


def test_expand_patterns(tmp_path):
    for name in ("a.xml", "sub/b.xml", "sub/c.txt"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("<testsuite/>")
    found = expand_patterns([str(tmp_path / "**" / "*.xml"), str(tmp_path / "a.xml")])
    assert [p.name for p in found] == ["a.xml", "b.xml"]
    with pytest.raises(JUnitError.__mro__[1], match="no files match"):
        expand_patterns([str(tmp_path / "*.nothing")])


def test_writer_escapes_everything_and_other_parsers_agree(tmp_path):
    nasty = "a & b < c > d \"q\" 's'\ttab\nline ]]> \x00\x1b[31m \u2603"
    cases = [
        CaseResult(
            test_id="t1",
            name=nasty,
            classname=nasty,
            outcome=CaseOutcome.FAILED,
            message=nasty,
            text=nasty,
            system_out=nasty,
            attempts=(Attempt(outcome=CaseOutcome.ERROR, message=nasty, text=nasty),),
        ),
        CaseResult(test_id="t2", name="ok", classname="c", outcome=CaseOutcome.SKIPPED, message=nasty),
    ]
    path = tmp_path / "w.xml"
    write_junit_suites([("s1", cases), ("empty", [])], path, name=nasty)
    etree.parse(str(path), etree.XMLParser(resolve_entities=False))  # strict: raises on anything invalid
    xml = JUnitXml.fromfile(str(path))
    assert xml.tests == 2
    assert xml.failures == 1
    back = parse_junit(path)
    expected = "a & b < c > d \"q\" 's'\ttab\nline ]]>  \u2603"
    assert back[0].name == expected
    assert back[0].message == expected
    assert back[0].attempts[0].text == expected
    assert back[0].outcome is CaseOutcome.FAILED
    assert back[1].outcome is CaseOutcome.SKIPPED


PYTEST_XUNIT1 = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites name="pytest tests"><testsuite name="pytest" tests="2">
<testcase classname="pkg.a.tests.test_x.TestPipe" name="test_empty[a::b]" file="pkg/a/tests/test_x.py" line="4"
 time="0.1"/>
<testcase classname="pkg.b.tests.test_y.TestPipe" name="test_empty[a::b]" file="pkg/b/tests/test_y.py" line="9"
 time="0.1"/>
</testsuite></testsuites>
"""


def _identities(path) -> list[dict[str, str]]:
    return [dict(case.attrib) for case in etree.parse(str(path)).iter("testcase")]


def test_written_junit_keeps_the_producers_identity_and_adds_ours_in_attributes_of_its_own(tmp_path):
    # issue 9.5: the merged file wrote classname="TestPipe" plus a file attribute, so the twins
    # below became one test for tools keyed on classname + name
    cases = parse_junit_bytes(PYTEST_XUNIT1, "pytest.xml")
    assert [c.line for c in cases] == [5, 10]  # 1-based for annotations, however pytest counts
    write_junit(cases, tmp_path / "merged.xml")
    written = _identities(tmp_path / "merged.xml")
    assert [(w["classname"], w["name"], w["file"], w["line"]) for w in written] == [
        ("pkg.a.tests.test_x.TestPipe", "test_empty[a::b]", "pkg/a/tests/test_x.py", "4"),
        ("pkg.b.tests.test_y.TestPipe", "test_empty[a::b]", "pkg/b/tests/test_y.py", "9"),
    ]
    assert [(w["ci-shards-id"], w["ci-shards-line"]) for w in written] == [
        ("pkg/a/tests/test_x.py::TestPipe::test_empty[a::b]", "5"),
        ("pkg/b/tests/test_y.py::TestPipe::test_empty[a::b]", "10"),
    ]
    again = parse_junit(tmp_path / "merged.xml")  # our own file reads back to the same cases
    assert [(c.test_id, c.line, c.junit_attrs) for c in again] == [(c.test_id, c.line, c.junit_attrs) for c in cases]


def test_a_producer_without_file_or_line_gets_none_added(tmp_path):
    xml = b'<testsuite name="jest"><testcase classname="Suite A" name="works" time="0.5"/></testsuite>'
    write_junit(parse_junit_bytes(xml, "jest.xml"), tmp_path / "merged.xml")
    (written,) = _identities(tmp_path / "merged.xml")
    assert {k: v for k, v in written.items() if k != "ci-shards-id"} == {
        "classname": "Suite A",
        "name": "works",
        "time": "0.500",
    }


def test_a_file_item_never_reported_reads_back_without_a_doubled_id(tmp_path):
    # issue 9.6: the "never ran" list showed `tests/test_b.py::tests/test_b.py`
    made_up = CaseResult(test_id="tests/test_b.py", name="tests/test_b.py", file="tests/test_b.py",
                         outcome=CaseOutcome.ERROR, type="not-run")  # fmt: skip
    write_junit([made_up], tmp_path / "junit.xml")
    assert [c.test_id for c in parse_junit(tmp_path / "junit.xml")] == ["tests/test_b.py"]


def test_pytest_counts_survive_a_round_trip(tmp_path):
    """xfailed and xpassed keep their own counts through the shard's junit.xml (pytest's own report
    writes an xpass as a plain pass), and a left-out item is a <skipped> element but no test."""
    skipped = CaseOutcome.SKIPPED
    cases = [
        CaseResult(test_id="t.py::test_ok", name="test_ok", classname="t"),
        CaseResult(test_id="t.py::test_xf", name="test_xf", classname="t", outcome=skipped, type=XFAILED_TYPE),
        CaseResult(test_id="t.py::test_xp", name="test_xp", classname="t", type=XPASSED_TYPE),
        CaseResult(test_id="t.py::test_sk", name="test_sk", classname="t", outcome=skipped),
        CaseResult(test_id="u.py", name="u.py", outcome=skipped, type=LEFT_OUT_TYPE, message="deselected"),
    ]
    path = tmp_path / "junit.xml"
    write_junit(cases, path)
    totals = Totals.of(parse_junit(path))
    assert (totals.tests, totals.passed, totals.skipped, totals.xfailed, totals.xpassed) == (4, 1, 1, 1, 1)
    assert totals.left_out == 1
    assert totals.counts_line() == "4 tests, 1 passed, 0 failed, 0 errors, 1 skipped, 1 xfailed, 1 xpassed"
    suite = etree.parse(str(path)).getroot()
    suite = suite if suite.tag == "testsuite" else suite[0]
    assert (suite.get("tests"), suite.get("skipped")) == ("5", "3")  # JUnit counts elements


# text as test code writes it into names and messages: markup, quotes, control characters, ANSI colour, surrogates,
# characters outside the BMP, and the plain ASCII most ids are
_ATTRIBUTE_TEXT = st.lists(
    st.one_of(
        st.sampled_from(list("&<>\"'\t\n\r\x1b\x00\x7f\x85\ufffe\ud800 ")),
        st.sampled_from(["\x1b[31m", "\x1b[0m", "\x1bM", "é", "\U0001f600"]),
        st.characters(min_codepoint=0x20, max_codepoint=0x7E),
        st.characters(),
    )
).map("".join)


@given(_ATTRIBUTE_TEXT)
def test_an_attribute_is_written_as_the_full_escape_writes_it(value: str) -> None:
    # the writer's fast path for printable ASCII must change nothing: the same bytes as the escape of every case
    assert junit_writer._attr(value) == junit_writer._escaped_attr(value)


@pytest.mark.parametrize(
    ("value", "read_back"),
    [
        ('a<b & "c"', 'a<b & "c"'),
        ("tests/test_x.py::test[1-2]", "tests/test_x.py::test[1-2]"),
        ("x\ty\nz", "x\ty\nz"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("é\x00", "é"),
    ],
)
def test_an_attribute_reads_back_as_written_less_colour_and_invalid_characters(value: str, read_back: str) -> None:
    assert etree.fromstring(f'<t a="{junit_writer._attr(value)}"/>'.encode()).get("a") == read_back


def test_test_output_never_starts_a_line_of_the_report_with_a_workflow_command(tmp_path) -> None:
    # found by tests/unit/test_cli_fuzz.py: `junit merge -o -` printed a failure's `\n::error::PWNED` at a line's
    # start on stdout, where a GitHub runner reads it as a workflow command (`::add-mask::` too)
    text = "boom\n::error::PWNED\r\n  ::add-mask::x\r::set-output name=a::b\nplain::text\n"
    case = CaseResult(
        test_id="t.py::test_x", name="test_x", classname="t", outcome=CaseOutcome.FAILED, message=text, text=text
    )
    path = tmp_path / "j.xml"
    write_junit([case], path)
    lines = path.read_bytes().replace(b"\r", b"\n").decode().splitlines()
    assert [line for line in lines if line.lstrip().startswith("::")] == []
    assert "\nplain::text" in path.read_text()  # "::" inside a line is left as it is
    (read,) = parse_junit(path)
    as_xml_reads_it = text.replace("\r\n", "\n").replace("\r", "\n")  # XML's end-of-line handling, as before
    assert (read.message, read.text) == (text, as_xml_reads_it)
