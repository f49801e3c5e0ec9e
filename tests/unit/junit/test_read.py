"""The reader on its one parser path (expat, via safe_xml): every real file in tests/data/junit reads
to the same cases as the golden file recorded from the earlier junitparser-on-lxml reader, variants and
errors give cases or one clear message, and the places where junitparser's own reading would be wrong
stay ours."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from junitparser.xunit2 import JUnitXml

from ci_shards.junit import JUnitError, parse_junit, parse_junit_bytes, safe_xml
from ci_shards.model.outcome import CaseOutcome
from ci_shards.report.aggregate import Totals
from tests.unit.golden import check_golden
from tests.unit.junit.test_junit import EXPECTED, EXPECTED_ERRORS

GOLDEN_CASES = Path(__file__).parents[2] / "data" / "junit_cases_golden.json"


def _read(data: bytes) -> object:
    """The cases, or the error message."""
    try:
        return parse_junit_bytes(data, "s.xml")
    except JUnitError as err:
        return str(err)


@pytest.mark.parametrize("name", sorted(EXPECTED) + sorted(EXPECTED_ERRORS))
def test_every_shared_file_counts_as_expected(real_data, name):
    result = _read((real_data / "junit" / name).read_bytes())
    if name in EXPECTED:
        t = Totals.of(result)
        assert (t.tests, t.passed, t.failed, t.errors, t.skipped, t.flaky) == EXPECTED[name]
    else:
        assert EXPECTED_ERRORS[name] in result


def test_every_real_file_reads_to_the_golden_cases(real_data):
    """Every field of every case of every real file (or its error), recorded from the junitparser-on-lxml
    reader this one replaced: the switch to one parser path changed nothing."""
    folder = real_data / "junit"
    read = {}
    for path in sorted(folder.iterdir()):
        result = _read(path.read_bytes())
        read[path.name] = result if isinstance(result, str) else [_plain(case) for case in result]
    check_golden(GOLDEN_CASES, json.dumps(read, indent=1, ensure_ascii=False, sort_keys=True) + "\n")


def _plain(case: object) -> object:
    return json.loads(json.dumps(dataclasses.asdict(case), default=str))  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("attributes", "outcome"),
    [
        ('status="notrun" result="suppressed"', CaseOutcome.SKIPPED),  # googletest's DISABLED_ tests
        ('status="run" result="skipped"', CaseOutcome.SKIPPED),  # GTEST_SKIP() before googletest 1.11
        ('status="disabled"', CaseOutcome.SKIPPED),  # Bazel, tst
        ('status="run" result="completed"', CaseOutcome.PASSED),
    ],
)
def test_a_case_whose_attributes_say_it_never_ran_is_skipped(attributes, outcome):
    (case,) = _read(f'<testsuites><testsuite><testcase name="t" {attributes}/></testsuite></testsuites>'.encode())
    assert case.outcome is outcome
    (failed,) = _read(f'<testsuite><testcase name="t" {attributes}><failure/></testcase></testsuite>'.encode())
    assert failed.outcome is CaseOutcome.FAILED  # a result element always wins


def test_expat_reads_what_libxml2_refuses():
    deep = b"<testsuites>" + b"<testsuite>" * 3000 + b"<testcase/>" + b"</testsuite>" * 3000 + b"</testsuites>"
    assert safe_xml.parse_xml(deep).tag == "testsuites"  # libxml2 stops at 2048 levels
    (case,) = _read(deep)
    assert case.outcome is CaseOutcome.PASSED


VARIANTS = [
    # comments, processing instructions and CDATA inside text join up
    b'<testsuite><testcase name="t"><failure>ab<!-- c -->cd<?pi x?>ef<![CDATA[gh]]>ij</failure></testcase></testsuite>',
    # cases directly under <testsuites>, nested suites interleaved with cases: document order, nearest suite
    b'<testsuites name="r"><testcase name="x"/><testsuite name="S"><testcase name="y"/>'
    b'<testsuite name="T" file="f.py"><testcase name="z"/></testsuite><testcase name="w"/></testsuite></testsuites>',
    b'<?xml version="1.0" encoding="ISO-8859-1"?><testsuite><testcase name="caf\xe9"/></testsuite>',
    '<?xml version="1.0" encoding="UTF-16"?><testsuite><testcase name="t\u00e9"/></testsuite>'.encode("utf-16"),
    b'<!DOCTYPE testsuite SYSTEM "http://127.0.0.1:9/x.dtd"><testsuite><testcase name="t"/></testsuite>',
    b'<!DOCTYPE x [<!ATTLIST testcase time CDATA "9">]><testsuite><testcase name="a"/></testsuite>',
    # undeclared entities under an unread external DTD: libxml2 would keep them as empty references
    b'<!DOCTYPE testsuite SYSTEM "x.dtd"><testsuite><testcase name="t">&c;</testcase></testsuite>',
    b'<!DOCTYPE testsuite SYSTEM "x.dtd"><testsuite><testcase name="&b;"/></testsuite>',
    b'<ns:testsuite xmlns:ns="urn:x"><ns:testcase name="t"/></ns:testsuite>',
    b'<testsuite><testcase name="a\x1b[31mb"/></testsuite>',
    b'<testsuite><testcase name="a&#27;[31mb"/>\x00</testsuite>',
    b'<testsuite><testcase name="a"/></testsuite><extra/>',
    b'<testsuite><testcase name="a" name="b"/></testsuite>',
    b'<testsuite><testcase name="a"></testsuit>',
    b"<testsuite><testcase name='\xff\xfe'/></testsuite>",
    b'<!DOCTYPE x [<!ENTITY a "x">]><testsuite>\x01',
    b'<testsuite>\x01<!DOCTYPE x [<!ENTITY a "x">]>',
    b'<!DOCTYPE x [<!NOTATION n SYSTEM "x"><!ENTITY a SYSTEM "y" NDATA n>]><testsuite/>',
    b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]><testsuite/>',
    b"hello",
]


@pytest.mark.parametrize("data", VARIANTS, ids=range(len(VARIANTS)))
def test_variants_and_errors_read_to_cases_or_one_message(data):
    result = _read(data)
    assert result  # every variant gives cases or an error message, never an empty success


def test_truncated_reports_are_errors(real_data):
    data = (real_data / "junit" / "mikepenz__action-junit-report__test_results__nested__junit.xml").read_bytes()
    for end in range(1, len(data), max(1, len(data) // 60)):
        result = _read(data[:end])
        assert isinstance(result, str), "a truncated report must be an error, not fewer tests"


def test_entity_declarations_refused():
    for doctype in (
        '<!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]>',  # libxml2 parses this one
        '<!DOCTYPE x [<!ENTITY a "a"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>',
        '<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>',
    ):
        data = f'<?xml version="1.0"?>{doctype}<testsuite><testcase name="n"/></testsuite>'.encode()
        assert "refusing a DOCTYPE that declares entities" in _read(data)


BIG = "y" * (11 * 1024 * 1024)  # over libxml2's 10 MB text node limit: expat has none
HUGE = {
    "text": f"<testsuite><testcase name='t'><system-out>{BIG}</system-out></testcase></testsuite>",
    "cdata": f"<testsuite><testcase name='t'><system-out><![CDATA[{BIG}]]></system-out></testcase></testsuite>",
    "attribute": f"<testsuite><testcase name='t'><failure message='{BIG}'/></testcase></testsuite>",  # pytest#12223
}


@pytest.mark.parametrize("kind", sorted(HUGE))
def test_huge_nodes_read(kind):
    data = HUGE[kind].encode()
    (case,) = _read(data)
    assert "characters cut" in (case.message if kind == "attribute" else case.system_out)


def test_counts_and_time_are_ours_not_junitparsers(tmp_path):
    xml = (
        b'<testsuite><testcase name="a" time="0,5"><failure/><failure/></testcase>'
        b'<testcase name="b"><skipped/><failure/></testcase></testsuite>'
    )
    path = tmp_path / "r.xml"
    path.write_bytes(xml)
    theirs = JUnitXml.fromfile(str(path))
    assert theirs.failures == 3  # junitparser counts result elements
    assert next(iter(next(iter(theirs)))).time == 5.0  # and reads a decimal comma as a separator
    a, b = parse_junit(path)
    assert Totals.of([a, b]).failed == 2
    assert (a.time, a.outcome, b.outcome) == (0.5, CaseOutcome.FAILED, CaseOutcome.FAILED)


def test_only_the_cases_own_children_count():
    xml = (
        b'<testsuite><testcase name="t"><rerunFailure time="1,5" message="m"><stackTrace/>text'
        b"<failure>nested</failure><system-out>nested out</system-out></rerunFailure>"
        b"<system-out>first</system-out><system-out>last</system-out></testcase></testsuite>"
    )
    (case,) = _read(xml)
    assert case.outcome is CaseOutcome.PASSED  # the failure inside the rerun element is not the case's
    assert case.system_out == "last"
    (attempt,) = case.attempts
    assert (attempt.text, attempt.time, attempt.message) == ("", 1.5, "m")  # an empty <stackTrace> is the trace


# --------------------------------------------------------------------------------------------
# property: any nesting of suites and cases with any mix of result elements is read the same way
# as written, one case per <testcase>, the most severe result winning

RESULTS = ["failure", "error", "skipped", "flakyFailure", "rerunError", "system-out", "properties"]
SEVERITY = {"skipped": 0, "failure": 2, "error": 3}
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


@st.composite
def _case(draw):
    children = draw(st.lists(st.sampled_from(RESULTS), max_size=4))
    name = draw(TEXT)
    time = draw(st.sampled_from(["", "0.25", "1,5", "1,234.5", "NaN", "x"]))
    body = "".join(
        f'<{c} message="{_escape(draw(TEXT))}"><!-- c -->{_escape(draw(TEXT))}</{c}>'
        if c != "properties"
        else "<properties/>"
        for c in children
    )
    finals = [c for c in children if c in SEVERITY]
    want = "passed" if not finals else max(finals, key=lambda c: SEVERITY[c])
    attrs = f' name="{_escape(name)}"' + (f' time="{time}"' if time else "")
    return f"<testcase{attrs}>{body}</testcase>", want


@st.composite
def _suite(draw, depth=0):
    parts, wants = [], []
    for _ in range(draw(st.integers(0, 4))):
        if depth < 3 and draw(st.integers(0, 3)) == 0:
            xml, sub = draw(_suite(depth + 1))
        else:
            xml, want = draw(_case())
            sub = [want]
        parts.append(xml)
        wants += sub
    return f'<testsuite name="{_escape(draw(TEXT))}">{"".join(parts)}</testsuite>', wants


@settings(max_examples=120, deadline=None)
@given(_suite())
def test_any_report_is_read_one_case_per_testcase(suite):
    xml, wants = suite
    cases = _read(f'<?xml version="1.0" encoding="utf-8"?><testsuites>{xml}</testsuites>'.encode())
    outcomes = {"passed": CaseOutcome.PASSED, "failure": CaseOutcome.FAILED, "error": CaseOutcome.ERROR}
    outcomes["skipped"] = CaseOutcome.SKIPPED
    assert [c.outcome for c in cases] == [outcomes[w] for w in wants]


@pytest.mark.parametrize(
    "head", [b"", b'<?xml version="1.0"?>', b'<?xml version="1.0" encoding="utf-8"?>', b"\xef\xbb\xbf"]
)
def test_invalid_utf8_is_replaced_not_a_lost_shard(head):
    data = head + b'<testsuite><testcase name="bin\xff\xfeary"><failure message="x\xc3">t\x80</failure></testcase>'
    data += b'<testcase name="ok \xe2\x98\x83"/></testsuite>'
    bad, good = _read(data)
    assert (bad.name, bad.outcome, bad.message, bad.text) == (
        "bin\ufffd\ufffdary",
        CaseOutcome.FAILED,
        "x\ufffd",
        "t\ufffd",
    )
    assert good.name == "ok \u2603"


def test_invalid_utf8_does_not_let_entity_declarations_through():
    data = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "\xff">]><testsuite><testcase name="&a;"/></testsuite>'
    assert "refusing a DOCTYPE that declares entities" in _read(data)


def test_jest_junit_ids_have_no_space_after_the_separator_and_the_message_comes_from_the_text():
    # jest-junit's default templates are "{classname} {title}": a test outside any describe block
    # gets a leading space in both, and the failure's error is the element's text, not a message
    report = b"""<testsuites name="jest tests"><testsuite name="src/b/three.test.ts" tests="1">
      <testcase classname=" three breaks" name=" three breaks" time="0.01" file="src/b/three.test.ts">
        <failure>Error: expect(received).toBe(expected)

Expected: 3
Received: 2
    at Object.&lt;anonymous&gt; (src/b/three.test.ts:2:15)</failure>
      </testcase></testsuite></testsuites>"""
    (case,) = parse_junit_bytes(report, "junit.xml")
    assert case.test_id == "src/b/three.test.ts::three breaks::three breaks"
    assert case.message == "Error: expect(received).toBe(expected)"
    assert case.text.startswith("Error: expect(received)")


@pytest.mark.parametrize("encoding", ["NaN", "hex", "utf-32", "idna", "punycode"])
def test_an_encoding_the_declaration_names_but_python_cannot_read_is_a_junit_error(encoding: str) -> None:
    # found by tests/unit/test_cli_fuzz.py: `encoding="NaN"` was an internal error (LookupError, exit 3)
    data = f'<?xml version="1.0" encoding="{encoding}"?><testsuite><testcase classname="a" name="té"/></testsuite>'
    with pytest.raises(JUnitError, match=r"^r\.xml: cannot be read in the encoding its XML declaration names: "):
        parse_junit_bytes(data.encode(), "r.xml")
