"""The shard's output.log: reading its tail, and streaming it live to the console while it grows.

The child writes straight into the file (see ``process``); these helpers only read it, so memory
stays flat whatever the size.
"""

from __future__ import annotations

import codecs
import secrets
import threading
from pathlib import Path
from typing import Final

from ci_shards.common.console import Console, strip_control

TAIL_BYTES: Final = 64 * 1024  # printed on failure (issue 3)
OUTCOME_TAIL_BYTES: Final = 8 * 1024  # kept in outcome.json; the full log is output.log


def read_tail(path: Path, limit: int = TAIL_BYTES, *, since: int = 0) -> str:
    """The last ``limit`` bytes after offset ``since``, decoded with replacement, ANSI and control codes stripped."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            start = max(since, size - limit)
            handle.seek(start)
            data = handle.read(limit)
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    if start > since:  # cut inside the text asked for: its first line is a part
        newline = text.find("\n")
        text = text[newline + 1 :] if 0 <= newline < 200 else text
    return strip_control(text)


class LiveTail:
    """Copies what the child appends to the spool onto the console, from a thread.

    On GitHub the whole stream is fenced with ``::stop-commands::<random token>`` so test output
    cannot issue workflow commands (docs: "Stopping and starting workflow commands").
    """

    def __init__(self, path: Path, console: Console, start_offset: int = 0) -> None:
        self._path = path
        self._console = console
        self._offset = start_offset
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="ci-shards-live", daemon=True)
        self._token = secrets.token_hex(16)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def __enter__(self) -> LiveTail:
        if self._console.github:
            self._console.line(f"::stop-commands::{self._token}")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._copy()
        if self._console.github:
            self._console.line("")
            self._console.line(f"::{self._token}::")

    def _copy(self) -> None:
        try:
            with self._path.open("rb") as handle:
                handle.seek(self._offset)
                while chunk := handle.read(65536):
                    self._offset += len(chunk)
                    self._console.stream.write(self._decoder.decode(chunk))
        except OSError:
            return
        self._console.stream.flush()

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            self._copy()
