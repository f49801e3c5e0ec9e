"""Reading, normalising and writing JUnit XML.

Reading (``ci_shards.junit.read``, re-exported here) turns any producer's JUnit into ``CaseResult``
values (expat, walked directly): nested suites flattened, totals recounted from the test cases
(``tests=``/``failures=`` are never trusted), several result elements in one case reduced to the
most severe, Surefire's flaky*/rerun* elements kept as attempts. A file that cannot be read raises
``JUnitError`` naming the file; callers that must keep going (aggregate) catch it and report it as
a value. No XML entity is ever expanded.

Writing produces one ``<testsuites>`` with one ``<testcase>`` per logical test, flaky tests
marked the Surefire way (``flakyFailure``), permanent failures with ``failure`` + ``rerunFailure``.
It streams text rather than building an element tree: half the time and memory (see
``write_junit_suites``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from ci_shards.common import outfile
from ci_shards.common.console import strip_ansi
from ci_shards.common.errors import InputError
from ci_shards.common.globs import has_magic, match_files
from ci_shards.junit.read import (
    INVALID_XML,
    MAX_TEXT_CHARS,
    TEST_ID_ATTR,
    TEST_LINE_ATTR,
    TIME_INVALID_ATTR,
    XPASSED_ATTR,
    JUnitError,
    clean_text,
    parse_junit,
    parse_junit_bytes,
    parse_time,
    pytest_nodeid,
)
from ci_shards.model.outcome import CaseOutcome, CaseResult, Totals

__all__ = [
    "MAX_TEXT_CHARS",
    "JUnitError",
    "expand_patterns",
    "parse_junit",
    "parse_junit_bytes",
    "parse_time",
    "pytest_nodeid",
    "read_many",
    "write_junit",
    "write_junit_suites",
]

_clean = clean_text


# --------------------------------------------------------------------------------------------
# writing


def _fmt_time(seconds: float) -> str:
    return f"{seconds:.3f}"


def _attr(value: str) -> str:
    """An attribute value: invalid characters dropped, markup and whitespace escaped (kept exactly)."""
    if value.isascii() and value.isprintable() and _ESCAPED.search(value) is None:
        # the common test id or file: printable ASCII has no invalid character and no ANSI sequence (they start
        # with ESC), so only an escaped character could change it; a 200,000-case report writes a million of them
        return value
    return _escaped_attr(value)


def _escaped_attr(value: str) -> str:
    value = INVALID_XML.sub("", strip_ansi(value))
    for raw, escaped in _ATTR_ESCAPES:
        value = value.replace(raw, escaped)
    return value


_ATTR_ESCAPES: Final = (
    ("&", "&amp;"),
    ("<", "&lt;"),
    (">", "&gt;"),
    ('"', "&quot;"),
    ("\n", "&#10;"),
    ("\r", "&#13;"),
    ("\t", "&#9;"),
)
# any character _escaped_attr replaces: the fast path in _attr must see each of them
_ESCAPED: Final = re.compile("[" + re.escape("".join(raw for raw, _ in _ATTR_ESCAPES)) + "]")


def _text(value: str) -> str:
    text = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _COMMAND_LINE.sub("&#10;", text) if "::" in text else text


# A line break that would start a line with "::" (test output holding `::error::` or `::add-mask::`): written as
# the reference &#10;, which XML reads back as the "\n" its end-of-line handling makes of the raw \r\n, \r or \n,
# so a CI step that prints the report (`junit merge -o -`, `cat junit.xml`) never hands the runner a workflow
# command (GitHub's runner ends a line at \r too).
_COMMAND_LINE: Final = re.compile(r"(?:\r\n|[\r\n])(?=[ \t]*::)")


def _open(tag: str, attrs: Iterable[tuple[str, str]]) -> str:
    return f"<{tag}" + "".join(f' {key}="{_attr(value)}"' for key, value in attrs)


def _element(tag: str, attrs: Iterable[tuple[str, str]], text: str, indent: str) -> str:
    head = indent + _open(tag, attrs)
    return f"{head}>{_text(text)}</{tag}>\n" if text else f"{head} />\n"


def _identity(case: CaseResult) -> list[tuple[str, str]]:
    """The producer's classname, name, file and line exactly as it wrote them; for a case ci-shards
    made up (never run, killed, no report) the case's own fields."""
    if case.junit_attrs:
        return list(case.junit_attrs)
    attrs = [("classname", case.classname), ("name", case.name)]
    if case.file:
        attrs.append(("file", case.file))
    if case.line is not None:
        attrs.append(("line", str(case.line)))
    return attrs


def _case_xml(case: CaseResult) -> str:
    """One ``<testcase>``: Surefire conventions (flaky* without failure, failure + rerun*)."""
    attrs = [*_identity(case), ("time", _fmt_time(case.time))]
    # ours go into attributes of our own, never into the producer's (issue 9.5): the id the test is
    # accounted under and its 1-based line, so a report we wrote reads back exactly
    if case.test_id:
        attrs.append((TEST_ID_ATTR, case.test_id))
    if case.line is not None:
        attrs.append((TEST_LINE_ATTR, str(case.line)))
    if case.time_invalid:  # the shard's report carries it to aggregate, so the timings store skips it
        attrs.append((TIME_INVALID_ATTR, "true"))
    if case.counted_as == "xpassed":
        attrs.append((XPASSED_ATTR, "true"))
    body: list[str] = []
    if case.outcome is CaseOutcome.SKIPPED:
        skipped_attrs = [("message", _clean(case.message, 4096))] + ([("type", case.type)] if case.type else [])
        body.append(_element("skipped", skipped_attrs, _clean(case.text), "      "))
    elif case.outcome.is_bad:
        tag = "failure" if case.outcome is CaseOutcome.FAILED else "error"
        result_attrs = [("message", _clean(case.message, 4096)), ("type", case.type or tag)]
        body.append(_element(tag, result_attrs, _clean(case.text), "      "))
    for attempt in case.attempts:
        if case.outcome is CaseOutcome.PASSED:
            tag = "flakyFailure" if attempt.outcome is CaseOutcome.FAILED else "flakyError"
        else:
            tag = "rerunFailure" if attempt.outcome is CaseOutcome.FAILED else "rerunError"
        interim = [
            ("message", _clean(attempt.message, 4096)),
            ("type", attempt.type or tag),
            ("time", _fmt_time(attempt.time)),
        ]
        trace = _element("stackTrace", [], _clean(attempt.text), "        ")
        body.append(f"      {_open(tag, interim)}>\n{trace}      </{tag}>\n")
    if case.system_out:
        body.append(_element("system-out", [], _clean(case.system_out), "      "))
    if case.system_err:
        body.append(_element("system-err", [], _clean(case.system_err), "      "))
    head = "    " + _open("testcase", attrs)
    return f"{head}>\n{''.join(body)}    </testcase>\n" if body else f"{head} />\n"


def _counts(totals: Totals) -> list[tuple[str, str]]:
    """JUnit's counts are of ``<testcase>`` elements: an xfailed test and a left-out item are ``<skipped>``
    ones (as pytest's own --junitxml counts an xfail), an xpassed test is a pass."""
    return [
        ("tests", str(totals.tests + totals.left_out)),
        ("failures", str(totals.failed)),
        ("errors", str(totals.errors)),
        ("skipped", str(totals.skipped + totals.xfailed + totals.left_out)),
        ("time", _fmt_time(totals.time)),
    ]


def write_junit_suites(
    suites: Iterable[tuple[str, Sequence[CaseResult]]], path: str | Path, *, name: str = "ci-shards"
) -> None:
    """One valid JUnit file with a ``<testsuite>`` per (name, cases), every count recounted from the
    cases: the output of ``junit merge`` and ``aggregate --junit``.

    Streamed as text, suite by suite (no element tree: half the time and memory on 100k cases), and
    counted once, never junitparser's ``+=``, which recounts the whole tree on every merge and is
    quadratic (docs/benchmarks.md: 23 to 33 s for 300 files x 200 cases).
    """
    suite_list = list(suites)
    totals = [kv for kv in _counts(Totals.of(c for _n, cases in suite_list for c in cases)) if kv[0] != "skipped"]
    with outfile.atomic(path) as out:  # parents made: `junit merge -o new/dir/x.xml` as `aggregate --junit`
        out.write('<?xml version="1.0" encoding="utf-8"?>\n')
        out.write(_open("testsuites", [("name", name), *totals]) + ">\n")  # xunit: no skipped on the root
        for suite_name, cases in suite_list:
            head = "  " + _open("testsuite", [("name", suite_name), *_counts(Totals.of(cases))])
            if not cases:
                out.write(head + " />\n")
                continue
            out.write(head + ">\n")
            out.writelines(_case_xml(case) for case in cases)
            out.write("  </testsuite>\n")
        out.write("</testsuites>\n")


def write_junit(cases: Iterable[CaseResult], path: str | Path, *, suite_name: str = "ci-shards") -> None:
    """One shard's report: a ``<testsuites>`` with one ``<testsuite>``, one ``<testcase>`` per test."""
    write_junit_suites([(suite_name, list(cases))], path, name=suite_name)


# --------------------------------------------------------------------------------------------
# many files (junit merge / junit summary)


def expand_patterns(patterns: Sequence[str]) -> list[Path]:
    """Files named or matched by glob patterns (``**`` recursive), in a stable order, duplicates
    dropped. A pattern that matches nothing is an ``InputError`` naming it: never a silent zero."""
    found: dict[Path, None] = {}
    for pattern in patterns:
        if has_magic(pattern):
            matches = [Path(hit) for hit in match_files(pattern, cwd=Path.cwd())]
            if not matches:
                raise InputError(pattern, "no files match this pattern")
            found.update(dict.fromkeys(matches))
        else:
            found[Path(pattern)] = None
    return list(found)


def read_many(paths: Sequence[Path]) -> tuple[list[tuple[str, list[CaseResult]]], list[JUnitError]]:
    """Every file's cases (suite name = the file's path), and the files that could not be read."""
    suites: list[tuple[str, list[CaseResult]]] = []
    errors: list[JUnitError] = []
    for path in paths:
        try:
            suites.append((str(path), parse_junit(path)))
        except JUnitError as err:
            errors.append(err)
    return suites, errors
