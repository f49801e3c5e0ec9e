"""The coverage answers' front door: ``query`` (what the folded coverage says about FILE:LINE) and ``status``
(whether it still describes the files here), each from a ``coverage.json`` and the repository root.

The edge: reads the artifact and hashes today's files; ``ci_shards.coverage.query`` decides. Needs no
coverage.py (the artifact is plain JSON), so it answers anywhere the repository is checked out.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from pathlib import Path

from ci_shards.common import json_text
from ci_shards.common.errors import InputError, UsageError
from ci_shards.coverage.artifact import CoverageArtifact
from ci_shards.coverage.query import Freshness, LineAnswer, freshness, query_line, recorded_digests


def query(location: str, *, artifact: Path, root: Path) -> LineAnswer:
    """``coverage query FILE:LINE``: the answer about one line, used only while the file is unchanged."""
    file_part, sep, line_part = location.rpartition(":")
    if not sep or not file_part or not line_part.isdigit() or int(line_part) < 1:
        msg = f"coverage query: {location!r} is not FILE:LINE with a line number from 1"
        raise UsageError(msg)
    loaded = _load(artifact)
    path = _relative(root, file_part)
    digest, lines_now = _digest(root, path)
    return query_line(loaded, path, int(line_part), digest=digest, lines_now=lines_now)


def status(*, artifact: Path, root: Path) -> Freshness:
    """``coverage status``: FRESH, or which of the files the coverage vouches for changed since."""
    loaded = _load(artifact)
    now = {path: _digest(root, path)[0] for path in recorded_digests(loaded)}
    return freshness(loaded, now)


def _load(path: Path) -> CoverageArtifact:
    try:
        data = json_text.loads(path.read_text(encoding="utf-8"))
        return CoverageArtifact.from_json(data)
    except FileNotFoundError:
        raise InputError(path, "no such coverage artifact (--artifact)") from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(path, f"cannot read: {err}") from None
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as err:  # Overflow: int() of Infinity
        raise InputError(path, f"not a ci-shards coverage artifact: {err}") from None


def _digest(root: Path, path: str) -> tuple[str | None, int]:
    """sha256 and line count of the file today, (None, 0) when it is gone."""
    try:
        raw = (root / path).read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None, 0
    except OSError as err:
        raise InputError(root / path, f"cannot read: {err.strerror or err}") from None
    return hashlib.sha256(raw).hexdigest(), len(raw.splitlines())


def _relative(root: Path, text: str) -> str:
    """The FILE argument as the artifact spells it: POSIX, relative to the root."""
    given = Path(text)
    if given.is_absolute():
        try:
            given = given.resolve().relative_to(root.resolve())
        except ValueError:
            msg = f"{text}: not under the repository root {root.resolve()} (--root)"
            raise UsageError(msg) from None
    return posixpath.normpath(str(given).replace(os.sep, "/"))
