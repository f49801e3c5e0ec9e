"""``ci-shards coverage query FILE:LINE`` and ``ci-shards coverage status``: their arguments, and the answer of
``coverage.front`` printed (text, or one JSON object with ``--json``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ci_shards.common.errors import EXIT_OK


def query_arguments(query: argparse.ArgumentParser) -> None:
    query.add_argument("location", metavar="FILE:LINE", help="a file (relative to the root, or absolute) and a line")
    status_arguments(query)


def status_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--artifact", type=Path, default=Path("coverage.json"), help="the folded coverage (default: coverage.json)"
    )
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository root (default: .)")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout (default: text)")


def query_handler(args: argparse.Namespace) -> int:
    # the coverage modules load only for `coverage query|status` (~5 ms every other subcommand would pay)
    from ci_shards.coverage.front import query  # noqa: PLC0415

    answer = query(args.location, artifact=args.artifact, root=args.root)
    sys.stdout.write(json.dumps(answer.to_json(), sort_keys=True, indent=2) + "\n" if args.json else answer.text())
    return EXIT_OK


def status_handler(args: argparse.Namespace) -> int:
    from ci_shards.coverage.front import status  # noqa: PLC0415 (above)

    result = status(artifact=args.artifact, root=args.root)
    sys.stdout.write(json.dumps(result.to_json(), sort_keys=True, indent=2) + "\n" if args.json else result.text())
    return EXIT_OK
