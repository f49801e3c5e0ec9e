"""Reading JUnit XML into ``CaseResult`` values, walking the standard library's element tree.

Any producer's JUnit (pytest, jest-junit, Surefire, go-junit-report, gotestsum, nextest, Bazel,
Playwright...) becomes one ``CaseResult`` per ``<testcase>``: nested suites flattened in document
order, several result elements in one case reduced to the most severe, Surefire's flaky*/rerun*
elements kept as attempts. A file that cannot be read raises ``JUnitError`` naming the file and,
for bad XML, the position.

The XML is parsed by ``ci_shards.junit.safe_xml`` (expat, no entity ever expanded) and walked here
directly, not through junitparser: its public API gets the counts, ``time``, the walk over suites
and a case's children wrong for a merger, and reading our own hyphenated attributes would need
its private ``_elem`` (docs/aggregate.md, "Why the reader walks the XML itself", with the figures).
"""

from __future__ import annotations

import dataclasses
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Final

from ci_shards.common.console import strip_ansi
from ci_shards.common.errors import InputError
from ci_shards.junit.safe_xml import EntityDeclared, parse_xml
from ci_shards.model.matching import collector_files, dotted_module, item_file
from ci_shards.model.outcome import (
    COLLECTION_ERROR_TYPE,
    COLLECTOR_SKIPPED_TYPE,
    JUNIT_IDENTITY_ATTRS,
    MAX_TEST_SECONDS,
    XPASSED_TYPE,
    Attempt,
    CaseOutcome,
    CaseResult,
)

MAX_TEXT_CHARS = 64 * 1024  # per message/trace kept in memory; GitHub caps annotation text at 64 KB too
INVALID_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


# ours, on a <testcase>: write_junit's mark of an implausible time written as 0, so the shard's
# report carries it to aggregate and the timings store skips the test
TIME_INVALID_ATTR: Final = "time-invalid"
# ours: the id ci-shards accounted a case under and its 1-based line, written with each case it writes,
# beside the producer's own classname/name/file/line, which are kept exactly as written: a shard's
# junit.xml must read back under the ids run judged it by (judge.py), whatever those hold
TEST_ID_ATTR: Final = "ci-shards-id"
TEST_LINE_ATTR: Final = "ci-shards-line"
# ours: a non-strict xfail that passed, which pytest's own JUnit writes as a plain pass; a shard's
# junit.xml keeps it so aggregate counts it as xpassed, as pytest does
XPASSED_ATTR: Final = "ci-shards-xpassed"


class JUnitError(InputError):
    """A JUnit file that cannot be read (missing, empty, not XML, not JUnit)."""


def parse_time(raw: str | None) -> float:
    """Seconds from a ``time`` attribute: ``0.001``, ``1E-07``, Surefire's ``1,234.5``, ``NaN`` → 0,
    and so is anything over ``MAX_TEST_SECONDS`` (``1e30``: implausible, it would swamp every total)."""
    value = _seconds(raw)
    return value if _plausible(value) else 0.0


def _plausible(seconds: float) -> bool:
    """A usable test time: finite, not negative, at most ``MAX_TEST_SECONDS``."""
    return 0.0 <= seconds <= MAX_TEST_SECONDS  # False for NaN too


def _seconds(raw: str | None) -> float:
    """``parse_time`` without the plausibility check: NaN for a value that is there but is no
    usable number (``abc``, ``NaN``, ``-1``, ``inf``), so callers can tell it from a missing one (0)."""
    if not raw:
        return 0.0
    text = raw.strip()
    if "," in text:  # checked first: most times have no comma, and the patterns cost a fifth of a read
        if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d*)?", text):  # thousands separators (Surefire XSD)
            text = text.replace(",", "")
        elif re.fullmatch(r"\d+,\d+", text):  # a decimal comma
            text = text.replace(",", ".")
    try:
        value = float(text)
    except ValueError:
        return math.nan
    return value if math.isfinite(value) and value >= 0 else math.nan


def pytest_nodeid(classname: str, name: str, file: str | None) -> str:
    """Map a pytest JUnit (classname, name[, file]) back to its node id.

    pytest writes classname ``tests.test_a.TestK`` and name ``test_m[1]`` for node id
    ``tests/test_a.py::TestK::test_m[1]``. With the ``file`` attribute (xunit1) the split between
    module path and class is exact; without it, the dotted parts are taken as the module path up to
    the first part that starts with an upper-case letter (pytest class naming), which is right for
    the common layouts and clearly wrong-looking (so visible) otherwise.
    """
    if not classname:
        return name
    return "::".join([*_pytest_scope(classname, file or ""), name])


@lru_cache(maxsize=4096)
def _pytest_scope(classname: str, file: str) -> tuple[str, ...]:
    """(module path, *classes) for a pytest classname; cached: a report repeats a few classnames."""
    parts = classname.split(".")
    if file:
        posix = PurePath(file).as_posix()
        module_parts = PurePath(posix).with_suffix("").as_posix().split("/")
        if parts[: len(module_parts)] == module_parts:
            return (posix, *parts[len(module_parts) :])
    split = next((i for i, p in enumerate(parts) if p[:1].isupper()), len(parts))
    return ("/".join(parts[:split]) + ".py", *parts[split:])


def clean_text(text: str | None, limit: int = MAX_TEXT_CHARS) -> str:
    """ANSI sequences and characters XML forbids removed; the middle cut beyond ``limit``."""
    if not text:
        return ""
    text = INVALID_XML.sub("", strip_ansi(text))
    if len(text) > limit:
        half = limit // 2
        text = f"{text[:half]}\n... [{len(text) - limit} characters cut] ...\n{text[-half:]}"
    return text


def _message(elem: ET.Element | None, text: str) -> str:
    """The element's ``message``, else the first non-blank line of its text: jest-junit writes no
    ``message`` attribute and puts the whole error in the element's text."""
    if elem is None:
        return ""
    stated = elem.get("message")
    if stated and stated.strip():
        return clean_text(stated, 4096)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return clean_text(first, 4096)


# --------------------------------------------------------------------------------------------
# the walk over the element tree

_FINAL: Final = {"failure": CaseOutcome.FAILED, "error": CaseOutcome.ERROR, "skipped": CaseOutcome.SKIPPED}
# a case that did not run, said by its attributes instead of a <skipped> element: Bazel's and tst's
# status="disabled", googletest's DISABLED_ tests (status="notrun" result="suppressed") and its GTEST_SKIP
# before 1.11 (status="run" result="skipped"). Counted as passed, a suite of disabled tests passed with
# nothing executed ("no tests ran" never fired) and every report showed passes that never happened.
_NOT_RUN_STATUS: Final = frozenset({"disabled", "notrun"})
_NOT_RUN_RESULT: Final = frozenset({"suppressed", "skipped"})
# Surefire's interim results (a flaky or rerun attempt): kept as ``Attempt`` values
_INTERIM: Final = {
    "flakyFailure": CaseOutcome.FAILED,
    "flakyError": CaseOutcome.ERROR,
    "rerunFailure": CaseOutcome.FAILED,
    "rerunError": CaseOutcome.ERROR,
}
_SUITE_TAGS: Final = ("testsuite", "testsuites")


def _cases(root: ET.Element) -> Iterator[tuple[ET.Element, str, str]]:
    """Every ``<testcase>`` at any depth in document order, with the nearest suite's ``file`` and
    ``name``. Iterative (a stack of iterators), so deep nesting cannot overflow."""
    stack = [(iter(root), root.get("file") or "", root.get("name") or "")]
    while stack:
        children, suite_file, suite_name = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
        elif child.tag == "testcase":
            yield child, suite_file, suite_name
        elif child.tag in _SUITE_TAGS:
            stack.append((iter(child), child.get("file") or suite_file, child.get("name") or suite_name))


def _is_pytest(root: ET.Element) -> bool:
    """pytest's report: ``<testsuites name="pytest tests">`` or a top-level suite named ``pytest``."""
    if root.tag == "testsuite":
        return root.get("name") == "pytest"
    return root.get("name") == "pytest tests" or any(s.get("name") == "pytest" for s in root.iterfind("testsuite"))


def _never_ran(case: ET.Element) -> bool:
    return case.get("status") in _NOT_RUN_STATUS or case.get("result") in _NOT_RUN_RESULT


def _attempt(elem: ET.Element, outcome: CaseOutcome) -> Attempt:
    """An interim result; its trace is the ``<stackTrace>`` child (Surefire, Playwright), else its
    own text (nextest writes plain text)."""
    trace = elem.find("stackTrace")
    text = clean_text(elem.text if trace is None else (trace.text or ""))
    return Attempt(
        outcome=outcome,
        message=_message(elem, text),
        type=elem.get("type") or "",
        text=text,
        time=parse_time(elem.get("time")),
    )


def _case_result(case: ET.Element, suite_file: str, suite_name: str, *, pytest_ids: bool) -> CaseResult:
    attrib = case.attrib  # a dict: its lookups cost less than the element's own get, a dozen per case
    get = attrib.get
    name = get("name") or ""
    classname = get("classname") or get("class") or ""  # some producers write ``class``
    file = get("file") or suite_file or None
    outcome = CaseOutcome.PASSED
    final: ET.Element | None = None
    attempts: list[Attempt] = []
    system_out = system_err = ""
    # direct children only: a system-out or failure nested in a rerunFailure is the attempt's, not the case's
    for child in case:
        tag = child.tag
        if tag in _FINAL:
            child_outcome = _FINAL[tag]
            # PASSED is only the default: any result element replaces it; otherwise the most severe wins
            if outcome is CaseOutcome.PASSED or child_outcome.severity > outcome.severity:
                outcome, final = child_outcome, child
        elif tag in _INTERIM:
            attempts.append(_attempt(child, _INTERIM[tag]))
        elif tag == "system-out":
            system_out = child.text or ""
        elif tag == "system-err":
            system_err = child.text or ""
    if outcome is CaseOutcome.PASSED and _never_ran(case):
        outcome = CaseOutcome.SKIPPED
    seconds = _seconds(get("time") or get("duration"))  # Bazel writes ``duration``
    plausible = _plausible(seconds)
    text = clean_text(None if final is None else final.text)
    return CaseResult(
        test_id=_test_id(case, name, classname, file, suite_name, pytest_ids=pytest_ids),
        name=name,
        classname=classname,
        file=file,
        line=_line(get("line"), get(TEST_LINE_ATTR), pytest_ids=pytest_ids),
        outcome=outcome,
        time=seconds if plausible else 0.0,
        # an unusable or implausible time is 0 in totals and skipped (and counted) by the timings store
        time_invalid=not plausible or get(TIME_INVALID_ATTR) == "true",
        message=_message(final, text),
        type=("" if final is None else final.get("type")) or _xpassed(case, outcome),
        text=text,
        system_out=clean_text(system_out),
        system_err=clean_text(system_err),
        attempts=tuple(attempts),
        junit_attrs=tuple([(k, attrib[k]) for k in JUNIT_IDENTITY_ATTRS if k in attrib]),
    )


def _xpassed(case: ET.Element, outcome: CaseOutcome) -> str:
    return XPASSED_TYPE if outcome is CaseOutcome.PASSED and case.get(XPASSED_ATTR) == "true" else ""


def _test_id(
    case: ET.Element, name: str, classname: str, file: str | None, suite_name: str, *, pytest_ids: bool
) -> str:
    stated_id = case.get(TEST_ID_ATTR)
    if stated_id:  # a report ci-shards wrote: the id it accounted the test under
        return stated_id
    module = dotted_module(file) if file else ""
    if pytest_ids or (module and classname.startswith(module)):
        # pytest's layout (also what write_junit produces from pytest ids, so ids survive a round trip)
        return pytest_nodeid(classname, name, file)
    # without a classname (jest-junit, gotestsum's TestMain, nested suites) the suite tells
    # same-named tests apart: <testsuite name="TestA"><testcase name="A"/> vs TestB's "A"
    # (but with a file attribute the file already scopes it: ``file::name`` is a module-level test)
    # jest-junit's default templates ("{classname} {title}") start with a space when a test has no
    # describe block: the parts are stripped so the id reads ``file::three breaks``
    scope = classname or ("" if file else suite_name)
    return "::".join(p.strip() for p in (file, scope, name) if p and p.strip())


def _line(written: str | None, ours: str | None, *, pytest_ids: bool) -> int | None:
    """CaseResult.line is 1-based (GitHub annotations start at 1): ours as we wrote it, else the
    producer's, where pytest writes its 0-based item location (executor.md §3.2: test_ok on line 1
    emits line="0")."""
    if ours and ours.isdigit():
        return int(ours)
    return int(written) + (1 if pytest_ids else 0) if written and written.isdigit() else None


def parse_junit_bytes(data: bytes, source: str) -> list[CaseResult]:
    """Parse JUnit from bytes; ``source`` names it in errors."""
    if not data.strip():
        raise JUnitError(source, "empty file (the runner may have been killed while writing it)")
    try:
        root = parse_xml(data)
    except EntityDeclared:
        raise JUnitError(source, "refusing a DOCTYPE that declares entities (XML entity expansion)") from None
    except ET.ParseError as err:
        line, column = err.position
        reason = str(err).split(":", 1)[0]
        raise JUnitError(source, f"not valid XML at line {line}, column {column + 1} ({reason})") from None
    except (LookupError, ValueError) as err:
        # expat asks Python's codecs for the encoding the XML declaration names: an unknown one ("NaN"), one that
        # is no text encoding ("hex"), a multi-byte one expat cannot take ("utf-32"), or bytes it cannot decode
        raise JUnitError(source, f"cannot be read in the encoding its XML declaration names: {err}") from None
    if root.tag not in _SUITE_TAGS:
        raise JUnitError(source, f"not a JUnit report (root element <{root.tag}>)")
    pytest_ids = _is_pytest(root)
    suites = _wrap_suite(root) if root.tag == "testsuite" else root  # a bare suite: the one child of <testsuites>
    results = []
    for case, file, name in _cases(suites):
        result = _case_result(case, file, name, pytest_ids=pytest_ids)
        results.append(result)
        if pytest_ids and not result.classname and result.outcome in _COLLECTOR_OUTCOMES:  # a collector's testcase
            results.extend([result] * (_collector_reports(case, result) - 1))
    return results


_COLLECTOR_OUTCOMES: Final = frozenset({CaseOutcome.SKIPPED, CaseOutcome.ERROR})


def _collector_reports(case: ET.Element, result: CaseResult) -> int:
    """How many tests pytest counts in one testcase of its own --junitxml: its reporter is per node id, so the
    collectors of one id that skipped or failed (a test file under --doctest-modules, collected as a doctest module
    and as a test module, each importing it) are one ``classname=""`` testcase holding a <skipped> or an <error>
    each, which pytest's summary and the suite's tests= count each ("2 skipped": networkx 3.6.1's importorskip
    modules, conformance run 12)."""
    tag = "skipped" if result.outcome is CaseOutcome.SKIPPED else "error"
    return max(1, sum(1 for child in case if child.tag == tag))


def _wrap_suite(suite: ET.Element) -> ET.Element:
    wrapper = ET.Element("testsuites")
    wrapper.append(suite)
    return wrapper


def parse_junit(path: str | Path) -> list[CaseResult]:
    """All test cases of one JUnit file, in document order."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise JUnitError(path, f"cannot read: {err.strerror or err}") from None
    return parse_junit_bytes(data, str(path))


def collectors_by_file(cases: Sequence[CaseResult], planned: Sequence[str]) -> list[CaseResult]:
    """``cases`` with each collector of a pytest report named by its planned file: pytest's --junitxml writes a
    module that skipped (``pytest.importorskip``) or failed at collection as ``classname=""`` with the module's
    dotted name (``tests.test_np``), which no planned file (``tests/test_np.py``) covers, so a shard whose
    command wrote the report said the file was "planned but never reported" where plain pytest skipped it. A
    skipped one becomes the collector's skipped test (``COLLECTOR_SKIPPED_TYPE``), as pytest counts it; a failed one
    the file's collection error (``COLLECTION_ERROR_TYPE``), as the plugin reports it."""
    files = collector_files((c.test_id for c in cases if not c.classname), (item_file(p) for p in planned))
    named: list[CaseResult] = []
    for case in cases:
        file = None if case.classname else files.get(case.test_id)
        if file is None:  # not a collector, or no planned file (or two) of that dotted name
            named.append(case)
            continue
        skipped = case.outcome is CaseOutcome.SKIPPED and not case.type
        errored = case.outcome is CaseOutcome.ERROR and not case.type
        kind = COLLECTOR_SKIPPED_TYPE if skipped else COLLECTION_ERROR_TYPE if errored else case.type
        named.append(dataclasses.replace(case, test_id=file, file=file, type=kind))
    return named
