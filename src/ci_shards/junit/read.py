"""Reading JUnit XML into ``CaseResult`` values, through junitparser.

Any producer's JUnit (pytest, jest-junit, Surefire, go-junit-report, gotestsum, nextest, Bazel,
Playwright...) becomes one ``CaseResult`` per ``<testcase>``: nested suites flattened in document
order, several result elements in one case reduced to the most severe, Surefire's flaky*/rerun*
elements kept as attempts. A file that cannot be read raises ``JUnitError`` naming the file and,
for bad XML, the position.

What junitparser does here: ``JUnitXml.fromfile(..., parse_func=...)`` builds the report from our
parser's tree (a bare ``<testsuite>`` root wrapped into ``<testsuites>``, any other root refused),
and the ``junitparser.xunit2`` classes sort a case's children into final results (``Failure``,
``Error``, ``Skipped``), interim results (``FlakyFailure``, ``RerunError``... with their
``<stackTrace>``) and ``system-out``/``system-err``. What stays ours, and why (docs/aggregate.md,
"What junitparser does, and what stays ours"): every count (junitparser's ``update_statistics``
counts result elements, not test cases, and writes attributes into the document when a count is
read, so we never read one), ``time`` (its ``FloatAttr`` reads ``0,5`` as 5.0: the raw attribute
goes through ``parse_time``), the walk over suites (``TestSuite.__iter__`` yields a suite's own
cases before its nested suites', recursively, and skips cases directly under ``<testsuites>``),
and the parser itself.

The XML underneath is parsed by ``ci_shards.junit.safe_xml`` (lxml when installed, expat otherwise, no
entity ever expanded), handed to junitparser as its ``parse_func``.
"""

from __future__ import annotations

import io
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path, PurePath
from typing import IO, Any, Final, TypeVar, cast

from junitparser import junitparser as jp
from junitparser import xunit2

from ci_shards.console import strip_ansi
from ci_shards.errors import InputError
from ci_shards.junit.safe_xml import EntityDeclared, parse_tree
from ci_shards.model import JUNIT_IDENTITY_ATTRS, MAX_TEST_SECONDS, Attempt, CaseOutcome, CaseResult

MAX_TEXT_CHARS = 64 * 1024  # per message/trace kept in memory; GitHub caps annotation text at 64 KB too
INVALID_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_E = TypeVar("_E", bound=jp.Element)
_FINAL: Final[dict[type[jp.FinalResult], CaseOutcome]] = {
    jp.Failure: CaseOutcome.FAILED,
    jp.Error: CaseOutcome.ERROR,
    jp.Skipped: CaseOutcome.SKIPPED,
}


# ours, on a <testcase>: write_junit's mark of an implausible time written as 0, so the shard's
# report carries it to aggregate and the timings store skips the test (junitparser's metaclass
# names attributes after the Python field, so a hyphenated one is read with ``_elem.get``)
TIME_INVALID_ATTR: Final = "time-invalid"
# ours: the id ci-shards accounted a case under and its 1-based line, written with each case it writes,
# beside the producer's own classname/name/file/line, which are kept exactly as written: a shard's
# junit.xml must read back under the ids run judged it by (judge.py), whatever those hold
TEST_ID_ATTR: Final = "ci-shards-id"
TEST_LINE_ATTR: Final = "ci-shards-line"


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


def _module_of(file: str) -> str:
    """``tests/test_a.py`` → ``tests.test_a`` (how pytest spells the module in ``classname``)."""
    return file.removesuffix(".py").replace("/", ".") if file.endswith(".py") else ""


# --------------------------------------------------------------------------------------------
# junitparser, wrapped (subclasses, as its README shows for custom attributes; never patched)


class _Attr(jp.Attr):
    """junitparser's string attribute, read with ``elem.get``: lxml's ``elem.attrib`` (what
    ``Attr`` reads) builds a proxy object on every access (with ``_wrap``, a fifth of the time
    it takes to read 60,000 cases)."""

    def __get__(self, instance: jp.Element, cls: object) -> str | None:
        value: str | None = instance._elem.get(self.name)
        return value


def _wrap(kind: type[_E], elem: Any) -> _E:
    """``kind.fromelem(elem)`` without the throwaway element junitparser's constructors build."""
    wrapper = kind.__new__(kind)
    wrapper._elem = elem
    return wrapper


class _Attempt(xunit2.InterimResult):
    """An interim (flaky or rerun) result, with its own ``time`` read raw (like ``_Case.time``)."""

    time = _Attr()

    def trace(self) -> str | None:
        """The ``<stackTrace>`` child's text (Surefire, Playwright), None without one (nextest
        writes plain text instead). ``stack_trace`` cannot tell an empty trace from none."""
        elem = self.child(xunit2.StackTrace)  # type: ignore[no-untyped-call]
        return None if elem is None else (elem.text or "")


class _FlakyFailure(_Attempt, xunit2.FlakyFailure):
    pass


class _FlakyError(_Attempt, xunit2.FlakyError):
    pass


class _RerunFailure(_Attempt, xunit2.RerunFailure):
    pass


class _RerunError(_Attempt, xunit2.RerunError):
    pass


_INTERIM: Final[dict[type[_Attempt], CaseOutcome]] = {
    _FlakyFailure: CaseOutcome.FAILED,
    _FlakyError: CaseOutcome.ERROR,
    _RerunFailure: CaseOutcome.FAILED,
    _RerunError: CaseOutcome.ERROR,
}


# xunit2.TestCase's children, with the interim results read through _Attempt
_CHILD_TYPES: Final[dict[str, type[jp.Result] | type[jp.System]]] = {
    **xunit2.TestCase.ITER_TYPES,
    "flakyFailure": _FlakyFailure,
    "flakyError": _FlakyError,
    "rerunFailure": _RerunFailure,
    "rerunError": _RerunError,
}


class _Case(xunit2.TestCase):
    """A ``<testcase>`` as junitparser.xunit2 reads it, with the attributes producers really write."""

    name = _Attr()
    classname = _Attr()
    time = _Attr()  # raw text: FloatAttr reads "0,5" as 5.0
    duration = _Attr()  # Bazel
    file = _Attr()
    line = _Attr()
    status = _Attr()  # Bazel: "run" | "disabled"

    @property
    def class_(self) -> str | None:
        """The ``class`` attribute some producers write instead of ``classname`` (a Python keyword,
        so it cannot be a junitparser ``Attr``)."""
        value: str | None = self._elem.get("class")
        return value

    def __iter__(self) -> Iterator[jp.Result | jp.System]:
        """The case's own results and output: direct children only, in document order (xunit2's
        ``TestCase`` walks every descendant, so a ``system-out`` inside a ``rerunFailure`` would
        pass for the case's own)."""
        kinds = _CHILD_TYPES
        for elem in self._elem:
            kind = kinds.get(elem.tag)
            if kind is not None:
                yield _wrap(kind, elem)


class _Suite(xunit2.TestSuite):
    testcase = _Case
    name = _Attr()
    file = _Attr()


class _Report(xunit2.JUnitXml):
    """The whole report. Counts are never read from it (see the module docstring)."""

    testsuite = _Suite
    file = _Attr()

    def cases(self) -> Iterator[tuple[_Case, str, str]]:
        """Every ``<testcase>`` at any depth in document order, with the nearest suite's ``file`` and
        ``name``. Iterative (a stack of iterators), so deep nesting cannot overflow."""
        stack = [(iter(self._elem), self.file or "", self.name or "")]
        while stack:
            children, suite_file, suite_name = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
            elif child.tag == "testcase":
                yield _wrap(_Case, child), suite_file, suite_name
            elif child.tag in ("testsuite", "testsuites"):
                suite = _wrap(_Suite, child)
                stack.append((iter(child), suite.file or suite_file, suite.name or suite_name))

    def is_pytest(self) -> bool:
        return self.name == "pytest tests" or any(suite.name == "pytest" for suite in self)


def _case_result(case: _Case, suite_file: str, suite_name: str, *, pytest_ids: bool) -> CaseResult:
    name: str = case.name or ""
    classname: str = case.classname or case.class_ or ""
    file: str | None = case.file or suite_file or None
    line_raw: str | None = case.line
    outcome = CaseOutcome.PASSED
    message = type_ = text = ""
    attempts: list[Attempt] = []
    system_out = system_err = ""
    for entry in case:
        if isinstance(entry, jp.FinalResult):
            entry_outcome = _FINAL[type(entry)]
            # PASSED is only the default: any result element replaces it; otherwise the most severe wins
            if outcome is CaseOutcome.PASSED or entry_outcome.severity > outcome.severity:
                outcome = entry_outcome
                message = entry.message or ""
                type_ = entry.type or ""
                text = entry.text or ""
        elif isinstance(entry, _Attempt):
            trace = entry.trace()
            attempts.append(
                Attempt(
                    outcome=_INTERIM[type(entry)],
                    message=clean_text(entry.message, 4096),
                    type=entry.type or "",
                    text=clean_text(entry.text if trace is None else trace),
                    time=parse_time(entry.time),
                )
            )
        elif isinstance(entry, jp.SystemOut):
            system_out = entry.text or ""
        elif isinstance(entry, jp.SystemErr):
            system_err = entry.text or ""
    if case.status == "disabled" and outcome is CaseOutcome.PASSED:
        outcome = CaseOutcome.SKIPPED
    seconds = _seconds(case.time or case.duration)
    elem = case._elem
    module = _module_of(file) if file else ""
    stated_id: str | None = elem.get(TEST_ID_ATTR)
    if stated_id:  # a report ci-shards wrote: the id it accounted the test under
        test_id = stated_id
    elif pytest_ids or (module and classname.startswith(module)):
        # pytest's layout (also what write_junit produces from pytest ids, so ids survive a round trip)
        test_id = pytest_nodeid(classname, name, file)
    else:
        # without a classname (jest-junit, gotestsum's TestMain, nested suites) the suite tells
        # same-named tests apart: <testsuite name="TestA"><testcase name="A"/> vs TestB's "A"
        # (but with a file attribute the file already scopes it: ``file::name`` is a module-level test)
        scope = classname or ("" if file else suite_name)
        test_id = "::".join(p for p in (file, scope, name) if p)
    return CaseResult(
        test_id=test_id,
        name=name,
        classname=classname,
        file=file,
        line=_line(line_raw, elem.get(TEST_LINE_ATTR), pytest_ids=pytest_ids),
        outcome=outcome,
        time=seconds if _plausible(seconds) else 0.0,
        # an unusable or implausible time is 0 in totals and skipped (and counted) by the timings store
        time_invalid=not _plausible(seconds) or case._elem.get(TIME_INVALID_ATTR) == "true",
        message=clean_text(message, 4096),
        type=type_,
        text=clean_text(text),
        system_out=clean_text(system_out),
        system_err=clean_text(system_err),
        attempts=tuple(attempts),
        junit_attrs=tuple((k, v) for k in JUNIT_IDENTITY_ATTRS if (v := elem.get(k)) is not None),
    )


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

    def parse_func(file: IO[bytes]) -> Any:
        tree = parse_tree(file.read())
        tag = tree.getroot().tag
        if tag not in ("testsuites", "testsuite"):  # checked here to name the root; fromroot only says "Invalid format"
            raise JUnitError(source, f"not a JUnit report (root element <{tag}>)")
        return tree

    try:
        # fromroot builds the report with cls(), so it is a _Report
        report = cast("_Report", _Report.fromfile(io.BytesIO(data), parse_func=parse_func))
    except EntityDeclared:
        raise JUnitError(source, "refusing a DOCTYPE that declares entities (XML entity expansion)") from None
    except ET.ParseError as err:
        line, column = err.position
        reason = str(err).split(":", 1)[0]
        raise JUnitError(source, f"not valid XML at line {line}, column {column + 1} ({reason})") from None
    pytest_ids = report.is_pytest()
    return [_case_result(c, f, n, pytest_ids=pytest_ids) for c, f, n in report.cases()]


def parse_junit(path: str | Path) -> list[CaseResult]:
    """All test cases of one JUnit file, in document order."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise JUnitError(path, f"cannot read: {err.strerror or err}") from None
    return parse_junit_bytes(data, str(path))
