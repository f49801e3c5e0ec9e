"""``ci-shards coverage query FILE:LINE`` and ``ci-shards coverage status``: answers from a folded coverage.json.

The edge: reads the artifact and hashes today's files; ``ci_shards.coverage.query`` decides. Needs no
coverage.py (the artifact is plain JSON), so it answers anywhere the repository is checked out.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import posixpath
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ci_shards.common.errors import EXIT_OK, InputError, UsageError

if TYPE_CHECKING:
    from ci_shards.coverage.artifact import CoverageArtifact


def query_arguments(query: argparse.ArgumentParser) -> None:
    query.add_argument("location", metavar="FILE:LINE", help="a file (relative to the root, or absolute) and a line")
    status_arguments(query)


def status_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--artifact", type=Path, default=Path("coverage.json"), help="the folded coverage (default: coverage.json)"
    )
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository root (default: .)")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout (default: text)")


def _load(path: Path) -> CoverageArtifact:
    # the coverage modules load only for `coverage query|status` (~5 ms every other subcommand would pay)
    from ci_shards.coverage.artifact import CoverageArtifact  # noqa: PLC0415

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return CoverageArtifact.from_json(data)
    except FileNotFoundError:
        raise InputError(path, "no such coverage artifact (--artifact)") from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(path, f"cannot read: {err}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as err:
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


def query_handler(args: argparse.Namespace) -> int:
    from ci_shards.coverage.query import query_line  # noqa: PLC0415

    file_part, sep, line_part = args.location.rpartition(":")
    if not sep or not file_part or not line_part.isdigit() or int(line_part) < 1:
        msg = f"coverage query: {args.location!r} is not FILE:LINE with a line number from 1"
        raise UsageError(msg)
    artifact = _load(args.artifact)
    path = _relative(args.root, file_part)
    digest, lines_now = _digest(args.root, path)
    answer = query_line(artifact, path, int(line_part), digest=digest, lines_now=lines_now)
    sys.stdout.write(json.dumps(answer.to_json(), sort_keys=True, indent=2) + "\n" if args.json else answer.text())
    return EXIT_OK


def status_handler(args: argparse.Namespace) -> int:
    from ci_shards.coverage.query import freshness, recorded_digests  # noqa: PLC0415

    artifact = _load(args.artifact)
    now = {path: _digest(args.root, path)[0] for path in recorded_digests(artifact)}
    result = freshness(artifact, now)
    sys.stdout.write(json.dumps(result.to_json(), sort_keys=True, indent=2) + "\n" if args.json else result.text())
    return EXIT_OK
