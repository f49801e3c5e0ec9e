"""Everything meant for people goes through here, to stderr (stdout carries only a command's product).

Knows GitHub's workflow-command syntax: groups, annotations, and ``::stop-commands::`` so that
echoed test output can never issue workflow commands of its own.
"""

from __future__ import annotations

import re
import secrets
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Final, TextIO

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def strip_control(text: str) -> str:
    """ANSI sequences and control characters (but not tab/newline) removed."""
    return _CONTROL.sub("", strip_ansi(text))


# every character that ends a line or controls the terminal (C0, DEL, C1, the Unicode line and paragraph
# separators), each as Python writes its escape: "\\n", "\\x1b", "\\u2028"
_LINE_BREAKERS: Final = {c: repr(chr(c))[1:-1] for c in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)}


def one_line(text: str) -> str:
    """``text`` as part of one line, its line breaks and control characters shown escaped: an error message quoting a
    value (a path given as ``$'a\\nb'``, a word read from a file) or a value from an input file printed in an
    answer. A raw newline would split the line a reader expects, and could start the next with a workflow command
    (``::error::``) a CI runner obeys; an escape sequence would rewrite the terminal."""
    return text.translate(_LINE_BREAKERS)


def escape_data(value: str) -> str:
    """Escape a workflow-command message (actions/toolkit command.ts escapeData)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a workflow-command property value (actions/toolkit command.ts escapeProperty)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def plural(count: int, noun: str, nouns: str = "") -> str:
    """``1 test``, ``2 tests``, ``0 errors``: a count and its noun, in agreement (``nouns`` for an irregular
    plural). Every count a user reads goes through it, so no report says "1 items"."""
    return f"{count} {noun}" if count == 1 else f"{count} {nouns or noun + 's'}"


def listed(names: Sequence[str], shown: int = 5) -> str:
    """The first ``shown`` names, and how many more there are: ``a, b, c, d, e and 7 more``."""
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def count_failures(failed: int, errors: int) -> str:
    """The one way ci-shards says how many tests went wrong (verdict reasons, headline, reports):
    ``7 failed, 2 errors``; ``1 test failed``; ``2 errors``. Failed and errored tests are counted
    apart: "6166 errors" is a broken environment, not 6166 failed asserts."""
    if failed and errors:
        return f"{failed} failed, {plural(errors, 'error')}"
    if errors:
        return plural(errors, "error")
    return f"{plural(failed, 'test')} failed"


def fmt_seconds(seconds: float) -> str:
    """``0.4s``, ``12.3s``, ``4m 05s``, ``1h 02m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def fmt_duration(seconds: float) -> str:
    """A duration in the syntax it is given in (``30m``, ``1.5s``, ``500ms``, ``2h``), so ``--timeout 30m`` is
    echoed as ``30m``, not ``1800.0``; ``parse_duration`` reads it back to the same value."""
    if 0 < seconds < 1 and (seconds * 1000).is_integer():
        return f"{_plain(seconds * 1000)}ms"
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and (seconds / size).is_integer():
            return f"{_plain(seconds / size)}{unit}"
    return f"{_plain(seconds)}s"


def _plain(number: float) -> str:
    """``30``, ``1.5``, ``1000.001``: every digit kept (``:g`` would round to 6), never an exponent."""
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def is_github_actions(env: Mapping[str, str]) -> bool:
    return env.get("GITHUB_ACTIONS") == "true"


def is_ci(env: Mapping[str, str]) -> bool:
    """On a CI machine: ``CI`` set (GitHub, GitLab, CircleCI, Buildkite and most others set it) or GitHub Actions."""
    return is_github_actions(env) or env.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@dataclass
class Console:
    """Writes human output. ``github`` turns on workflow-command syntax (groups, annotations)."""

    stream: TextIO = field(default_factory=lambda: sys.stderr)
    github: bool = False

    def line(self, text: str = "") -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def warning(self, text: str) -> None:
        if self.github:
            self.line(f"::warning::{escape_data(text)}")
        else:
            self.line(f"warning: {text}")

    def error(self, text: str) -> None:
        if self.github:
            self.line(f"::error::{escape_data(text)}")
        else:
            self.line(f"error: {text}")

    def notice(self, text: str) -> None:
        if self.github:
            self.line(f"::notice::{escape_data(text)}")
        else:
            self.line(text)

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        if self.github:
            self.line(f"::group::{escape_data(title)}")
        else:
            self.line(f"--- {title}")
        try:
            yield
        finally:
            if self.github:
                self.line("::endgroup::")

    def untrusted(self, text: str) -> None:
        """Echo output that came from tests: on GitHub, fenced so it cannot issue workflow commands."""
        if not self.github:
            self.stream.write(text if text.endswith("\n") or not text else text + "\n")
            self.stream.flush()
            return
        token = secrets.token_hex(16)
        self.line(f"::stop-commands::{token}")
        self.stream.write(text if text.endswith("\n") or not text else text + "\n")
        self.line(f"::{token}::")


def console_for(env: Mapping[str, str], stream: TextIO | None = None) -> Console:
    return Console(stream=stream or sys.stderr, github=is_github_actions(env))
