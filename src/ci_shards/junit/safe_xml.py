"""Parsing untrusted XML (JUnit reports from any producer) into an element tree, safely.

One parser, in production and in the tests alike: the standard library's expat (ElementTree), so
ci-shards needs no XML library of its own. No entity is ever expanded: any entity declaration is
refused as expat reads it (as defusedxml does), which rules out "billion laughs", and expat never
fetches external entities. Comments and processing instructions are dropped, so text around them
joins up. Nesting has no depth limit (libxml2 stops at 2048 levels).

Control characters XML forbids (raw ESC from an ANSI-colouring producer, ``&#27;``) are removed and
the document parsed again, so one coloured message does not lose a whole shard's report; bytes that
are not valid UTF-8 in a UTF-8 document are replaced with U+FFFD the same way.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

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


_DECLARED_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def _fix_encoding(data: bytes) -> bytes:
    """Bytes that are not valid UTF-8 in a UTF-8 document (declared so, or by default) replaced with
    U+FFFD: one test printing raw binary must not lose a whole shard's report. Documents declaring
    another encoding are left alone (every byte is valid Latin-1; UTF-16 has its own rules)."""
    declared = _DECLARED_ENCODING.match(data)
    if declared is not None and declared.group(1).lower().replace(b"_", b"-") not in (b"utf-8", b"utf8"):
        return data
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace").encode("utf-8")
    return data


def _recover(data: bytes) -> bytes:
    """The document with what producers get wrong repaired: forbidden control characters removed,
    invalid UTF-8 replaced. Entity declarations are untouched, so they are still refused."""
    return _strip_illegal(_fix_encoding(data))


class EntityDeclared(Exception):
    """The document declares entities: refused before any could be expanded."""


def _refuse_entity(*_args: object) -> None:
    raise EntityDeclared


def _parse_expat(data: bytes) -> ET.Element:
    """ElementTree over expat, refusing any entity declaration (as defusedxml does): expat never
    fetches external entities, and refusing declarations also rules out "billion laughs"."""
    parser = ET.XMLParser()
    expat = getattr(parser, "parser", None)  # the pyexpat parser behind ET.XMLParser
    if expat is not None:
        expat.EntityDeclHandler = _refuse_entity
        expat.UnparsedEntityDeclHandler = _refuse_entity
    elif b"<!ENTITY" in data:  # pragma: no cover - every CPython exposes .parser
        raise EntityDeclared
    parser.feed(data)
    return parser.close()


def parse_xml(data: bytes) -> ET.Element:
    """The document's root element. Raises ``EntityDeclared``, or ``xml.etree.ElementTree.ParseError``
    (line, column, reason) for anything unreadable even once repaired."""
    try:
        return _parse_expat(data)
    except ET.ParseError:
        cleaned = _recover(data)
        if cleaned == data:
            raise
        return _parse_expat(cleaned)  # raw ESC/NUL from an ANSI-colouring producer: recover, not fail
