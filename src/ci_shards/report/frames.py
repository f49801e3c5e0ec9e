"""Where a failure happened: the failing line, read from the failure's traceback text. Pure.

The JUnit ``line`` of a test is its ``def`` (or decorator) line, which says which test failed but
not where. The traceback knows: the deepest frame in the test's own file is the line in the test
that failed (the assert, or the call into the code that raised); without one, the deepest frame
inside the repository. Frames in installed packages and outside the workspace never count.

Frame syntaxes read (one regex each, on whole lines):
- pytest long/short/line repr: ``tests/test_a.py:12: AssertionError`` / ``tests/test_a.py:12: in test_x``
- Python tracebacks: ``  File "/repo/tests/test_a.py", line 12, in test_x``
- JavaScript stacks (node, jest): ``at fn (/repo/src/a.test.js:12:5)`` / ``at /repo/src/a.test.js:12:5``
- Go test output: ``    a_test.go:12: got 1, want 2``
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final

_FRAME_PATTERNS: Final = (
    re.compile(r"^(?P<path>[^\s:\"'()]+):(?P<line>\d+):(?: .*)?$", re.M),  # pytest, go (path is not indented…)
    re.compile(r"^\s+(?P<path>[^\s:\"'()]+\.go):(?P<line>\d+): ", re.M),  # …except go's, which is
    re.compile(r"^\s*File \"(?P<path>[^\"]+)\", line (?P<line>\d+)", re.M),
    re.compile(r"^\s*at (?:.*? \()?(?P<path>(?:[A-Za-z]:)?[^\s:()]+):(?P<line>\d+):\d+\)?\s*$", re.M),
)
# paths that belong to installed code, not the repository (site-packages, node_modules, the stdlib)
_VENDORED: Final = re.compile(r"(^|/)(site-packages|dist-packages|node_modules|\.venv|venv|lib/python[\d.]+)/")


@dataclass(frozen=True)
class Frame:
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def frames(text: str) -> list[Frame]:
    """Every frame in ``text``, outermost first (in the order the text gives them)."""
    found: list[tuple[int, Frame]] = []
    for pattern in _FRAME_PATTERNS:
        for match in pattern.finditer(text):
            line = int(match.group("line"))
            if line > 0:
                found.append((match.start(), Frame(match.group("path").replace("\\", "/"), line)))
    return [frame for _position, frame in sorted(found, key=lambda pair: pair[0])]


def _in_repository(path: str, test_file: str, workspace: str) -> str | None:
    """``path`` relative to the repository, or None when it is outside it (or installed code)."""
    posix = PurePosixPath(path)
    if posix.is_absolute() or re.match(r"[A-Za-z]:/", path):
        if test_file and path.endswith("/" + test_file):  # the runner printed the test file's absolute path
            return test_file
        if not workspace:
            return None
        try:
            path = posix.relative_to(PurePosixPath(workspace.replace("\\", "/"))).as_posix()
        except ValueError:
            return None
    path = path.removeprefix("./")
    return None if _VENDORED.search(path) or path.startswith("../") else path


def failing_line(text: str, test_file: str | None, *, workspace: str = "") -> Frame | None:
    """The deepest frame of ``text`` in ``test_file``, else the deepest in the repository, as a
    repository-relative path; None when the text has none (then the test's own line is all we have)."""
    test_file = (test_file or "").replace("\\", "/").removeprefix("./")
    if test_file.startswith("/") and workspace:
        test_file = _in_repository(test_file, "", workspace) or test_file
    in_repo = []
    for frame in frames(text):
        path = _in_repository(frame.path, test_file, workspace)
        if path is not None:
            in_repo.append(Frame(path, frame.line))
    in_test = [f for f in in_repo if f.path == test_file]
    if in_test:
        return in_test[-1]
    return in_repo[-1] if in_repo else None


# pytest prints source lines behind a 4-character gutter ("    ", ">   ", "E   "); its JUnit text
# loses the first line's gutter ("def test_x():" over "        x = 1"), which misaligns the code
_GUTTER: Final = re.compile(r"(    |>   |E   )")
_PYTEST_LOCATION: Final = re.compile(r"^[^\s:]+\.py:\d+:", re.M)


def restore_first_indent(text: str) -> str:
    """``text`` with the gutter of its first line put back when it is pytest source lost at the
    start of a JUnit text: an unindented first line followed directly by a gutter line, in a
    text with pytest's ``path.py:N:`` location lines."""
    first, newline, rest = text.partition("\n")
    if not (first and not first[0].isspace() and not _GUTTER.match(first) and _GUTTER.match(rest)):
        return text
    if _PYTEST_LOCATION.search(rest):
        return "    " + first + newline + rest
    return text
