"""Reading, normalising and writing JUnit XML.

Reading turns any producer's JUnit (pytest, jest-junit, Surefire, go-junit-report, gotestsum,
nextest, Bazel, Playwright...) into ``CaseResult`` values: nested suites flattened, totals
recounted from the test cases (``tests=``/``failures=`` are never trusted), several result
elements in one case reduced to the most severe, Surefire's flaky*/rerun* elements kept as
attempts. A file that cannot be read raises ``JUnitError`` naming the file; callers that must
keep going (aggregate) catch it and report it as a value.

Writing produces one ``<testsuites>`` with one ``<testcase>`` per logical test, flaky tests
marked the Surefire way (``flakyFailure``), permanent failures with ``failure`` + ``rerunFailure``.

External entities are never resolved: the stdlib parser (expat) does not fetch them, and a
DOCTYPE declaring entities is refused outright.
"""

from __future__ import annotations

import glob
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Final

from ci_shards.console import strip_ansi
from ci_shards.errors import InputError
from ci_shards.model import Attempt, CaseOutcome, CaseResult

MAX_TEXT_CHARS = 64 * 1024  # per message/trace kept in memory; GitHub caps annotation text at 64 KB too
_INVALID_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_RESULT_TAGS = {"failure": CaseOutcome.FAILED, "error": CaseOutcome.ERROR, "skipped": CaseOutcome.SKIPPED}
_INTERIM_TAGS = {
    "flakyFailure": CaseOutcome.FAILED,
    "flakyError": CaseOutcome.ERROR,
    "rerunFailure": CaseOutcome.FAILED,
    "rerunError": CaseOutcome.ERROR,
}


class JUnitError(InputError):
    """A JUnit file that cannot be read (missing, empty, not XML, not JUnit)."""


def parse_time(raw: str | None) -> float:
    """Seconds from a ``time`` attribute: ``0.001``, ``1E-07``, Surefire's ``1,234.5``, ``NaN`` → 0."""
    if not raw:
        return 0.0
    text = raw.strip()
    if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d*)?", text):  # thousands separators (Surefire XSD)
        text = text.replace(",", "")
    elif re.fullmatch(r"\d+,\d+", text):  # a decimal comma
        text = text.replace(",", ".")
    try:
        value = float(text)
    except ValueError:
        return 0.0
    return value if math.isfinite(value) and value >= 0 else 0.0


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


def _clean(text: str | None, limit: int = MAX_TEXT_CHARS) -> str:
    if not text:
        return ""
    text = _INVALID_XML.sub("", strip_ansi(text))
    if len(text) > limit:
        half = limit // 2
        text = f"{text[:half]}\n... [{len(text) - limit} characters cut] ...\n{text[-half:]}"
    return text


def _module_of(file: str) -> str:
    """``tests/test_a.py`` → ``tests.test_a`` (how pytest spells the module in ``classname``)."""
    return file.removesuffix(".py").replace("/", ".") if file.endswith(".py") else ""


def _iter_cases(element: ET.Element) -> Iterator[tuple[ET.Element, str, str]]:
    """Every <testcase> under ``element`` at any depth in document order, with the nearest suite's
    ``file`` and ``name``. Iterative (a stack of iterators), so deep nesting cannot overflow."""
    stack = [(iter(element), element.get("file", ""), element.get("name", ""))]
    while stack:
        children, suite_file, suite_name = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
        elif child.tag == "testcase":
            yield child, suite_file, suite_name
        elif child.tag in ("testsuite", "testsuites"):
            stack.append((iter(child), child.get("file", "") or suite_file, child.get("name", "") or suite_name))


def _case_from_element(case: ET.Element, suite_file: str, suite_name: str, *, pytest_ids: bool) -> CaseResult:
    name = case.get("name", "")
    classname = case.get("classname", "") or case.get("class", "")
    file = case.get("file") or suite_file or None
    line_raw = case.get("line")
    outcome = CaseOutcome.PASSED
    message = type_ = text = ""
    attempts: list[Attempt] = []
    system_out = system_err = ""
    for child in case:
        tag = child.tag
        if tag in _RESULT_TAGS:
            child_outcome = _RESULT_TAGS[tag]
            # PASSED is only the default: any result element replaces it; otherwise the most severe wins
            if outcome is CaseOutcome.PASSED or child_outcome.severity > outcome.severity:
                outcome = child_outcome
                message = child.get("message", "")
                type_ = child.get("type", "")
                text = child.text or ""
        elif tag in _INTERIM_TAGS:
            trace = child.find("stackTrace")
            attempts.append(
                Attempt(
                    outcome=_INTERIM_TAGS[tag],
                    message=_clean(child.get("message", ""), 4096),
                    type=child.get("type", ""),
                    text=_clean((trace.text if trace is not None else child.text) or ""),
                    time=parse_time(child.get("time")),
                )
            )
        elif tag == "system-out":
            system_out = child.text or ""
        elif tag == "system-err":
            system_err = child.text or ""
    if case.get("status") == "disabled" and outcome is CaseOutcome.PASSED:
        outcome = CaseOutcome.SKIPPED
    if pytest_ids or (file and _module_of(file) and classname.startswith(_module_of(file))):
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
        line=int(line_raw) if line_raw and line_raw.isdigit() else None,
        outcome=outcome,
        time=parse_time(case.get("time") or case.get("duration")),
        message=_clean(message, 4096),
        type=type_,
        text=_clean(text),
        system_out=_clean(system_out),
        system_err=_clean(system_err),
        attempts=tuple(attempts),
    )


_ILLEGAL_BYTES = re.compile(
    rb"(?:\x1b|&#(?:x0*1[bB]|0*27);)\[[0-9;?]*[ -/]*[@-~]"  # an ANSI colour sequence, raw or escaped
    rb"|[\x00-\x08\x0b\x0c\x0e-\x1f]|&#(x[0-9a-fA-F]+|[0-9]+);"
)


def _strip_illegal(data: bytes) -> bytes:
    """Remove control characters XML 1.0 forbids, raw or as character references (``&#27;``)."""

    def keep(match: re.Match[bytes]) -> bytes:
        ref = match.group(1)
        if ref is None:
            return b""
        code = int(ref[1:], 16) if ref[:1] == b"x" else int(ref)
        return match.group(0) if code in (9, 10, 13) or code >= 32 else b""

    return _ILLEGAL_BYTES.sub(keep, data)


class _EntityDeclared(Exception):
    pass


def _refuse_entity(*_args: object) -> None:
    raise _EntityDeclared


def _parse_xml(data: bytes) -> ET.Element:
    """ElementTree over expat, refusing any entity declaration (as defusedxml does): expat never
    fetches external entities, and refusing declarations also rules out "billion laughs"."""
    parser = ET.XMLParser()
    expat = getattr(parser, "parser", None)  # the pyexpat parser behind ET.XMLParser
    if expat is not None:
        expat.EntityDeclHandler = _refuse_entity
        expat.UnparsedEntityDeclHandler = _refuse_entity
    elif b"<!ENTITY" in data:  # pragma: no cover - every CPython exposes .parser
        raise _EntityDeclared
    parser.feed(data)
    return parser.close()


def _is_pytest(root: ET.Element) -> bool:
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    return root.get("name") == "pytest tests" or any(s.get("name") == "pytest" for s in suites)


def parse_junit_bytes(data: bytes, source: str) -> list[CaseResult]:
    """Parse JUnit from bytes; ``source`` names it in errors."""
    if not data.strip():
        raise JUnitError(source, "empty file (the runner may have been killed while writing it)")
    try:
        try:
            root = _parse_xml(data)
        except ET.ParseError:
            cleaned = _strip_illegal(data)
            if cleaned == data:
                raise
            root = _parse_xml(cleaned)  # raw ESC/NUL from an ANSI-colouring producer: recover, not fail
    except _EntityDeclared:
        raise JUnitError(source, "refusing a DOCTYPE that declares entities (XML entity expansion)") from None
    except ET.ParseError as err:
        line, column = err.position
        reason = str(err).split(":", 1)[0]
        raise JUnitError(source, f"not valid XML at line {line}, column {column + 1} ({reason})") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise JUnitError(source, f"not a JUnit report (root element <{root.tag}>)")
    pytest_ids = _is_pytest(root)
    return [_case_from_element(c, f, n, pytest_ids=pytest_ids) for c, f, n in _iter_cases(root)]


def parse_junit(path: str | Path) -> list[CaseResult]:
    """All test cases of one JUnit file, in document order."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise JUnitError(path, f"cannot read: {err.strerror or err}") from None
    return parse_junit_bytes(data, str(path))


# --------------------------------------------------------------------------------------------
# writing


def _fmt_time(seconds: float) -> str:
    return f"{seconds:.3f}"


def _attr(value: str) -> str:
    """An attribute value: invalid characters dropped, markup and whitespace escaped (kept exactly)."""
    value = _INVALID_XML.sub("", strip_ansi(value))
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


def _text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _open(tag: str, attrs: Iterable[tuple[str, str]]) -> str:
    return f"<{tag}" + "".join(f' {key}="{_attr(value)}"' for key, value in attrs)


def _element(tag: str, attrs: Iterable[tuple[str, str]], text: str, indent: str) -> str:
    head = indent + _open(tag, attrs)
    return f"{head}>{_text(text)}</{tag}>\n" if text else f"{head} />\n"


def _case_xml(case: CaseResult) -> str:
    """One ``<testcase>``: Surefire conventions (flaky* without failure, failure + rerun*)."""
    attrs = [("classname", case.classname), ("name", case.name), ("time", _fmt_time(case.time))]
    if case.file:
        attrs.append(("file", case.file))
    if case.line is not None:
        attrs.append(("line", str(case.line)))
    body: list[str] = []
    if case.outcome is CaseOutcome.SKIPPED:
        body.append(_element("skipped", [("message", _clean(case.message, 4096))], _clean(case.text), "      "))
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


def _counts(cases: Iterable[CaseResult]) -> list[tuple[str, str]]:
    tests = failures = errors = skipped = 0
    time = 0.0
    for case in cases:
        tests += 1
        failures += case.outcome is CaseOutcome.FAILED
        errors += case.outcome is CaseOutcome.ERROR
        skipped += case.outcome is CaseOutcome.SKIPPED
        time += case.time
    return [
        ("tests", str(tests)),
        ("failures", str(failures)),
        ("errors", str(errors)),
        ("skipped", str(skipped)),
        ("time", _fmt_time(time)),
    ]


def write_junit_suites(
    suites: Iterable[tuple[str, Sequence[CaseResult]]], path: str | Path, *, name: str = "ci-shards"
) -> None:
    """One valid JUnit file with a ``<testsuite>`` per (name, cases), every count recounted from the
    cases: the output of ``junit merge`` and ``aggregate --junit``.

    Streamed as text, suite by suite (no element tree: half the time and memory on 100k cases), and
    counted once, never junitparser's ``+=``, which recounts the whole tree on every merge and is
    quadratic (notes/executor.md §5).
    """
    suite_list = list(suites)
    totals = [kv for kv in _counts(c for _n, cases in suite_list for c in cases) if kv[0] != "skipped"]
    with Path(path).open("w", encoding="utf-8", newline="\n") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?>\n')
        out.write(_open("testsuites", [("name", name), *totals]) + ">\n")  # xunit: no skipped on the root
        for suite_name, cases in suite_list:
            head = "  " + _open("testsuite", [("name", suite_name), *_counts(cases)])
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
        if any(char in pattern for char in "*?["):
            matches = sorted(Path(m) for m in glob.glob(pattern, recursive=True) if Path(m).is_file())
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
