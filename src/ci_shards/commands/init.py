"""``ci-shards init``: its flags, and what it prints. The work is ``ci_shards.init``'s (docs/init.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ci_shards.common.console import console_for
from ci_shards.init import Ci, InitRequest, Runner, plan_init, write_files
from ci_shards.init.detect import DEFAULT_PYTHON


def init_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ci", choices=[c.value for c in Ci], default=Ci.GITHUB.value, help="github writes "
                        ".github/workflows/tests.yml, gitlab .gitlab-ci.yml (default: github)")  # fmt: skip
    parser.add_argument("--runner", choices=[r.value for r in Runner], help="the test runner (default: detected "
                        "from pytest settings, package.json, go.mod)")  # fmt: skip
    parser.add_argument("--shards", default="4", metavar="N|auto", help="shards per run, or auto to size them by "
                        "--target-seconds (GitHub only) (default: 4)")  # fmt: skip
    parser.add_argument("--target-seconds", type=int, default=300, metavar="S",
                        help="with --shards auto: how long the slowest shard may take (default: 300)")  # fmt: skip
    parser.add_argument("--python-version", metavar="X.Y", help="the Python the tests run on (default: from "
                        f".python-version, else requires-python, else {DEFAULT_PYTHON})")  # fmt: skip
    parser.add_argument("--install", metavar="CMD", help="the test job's install command (default: detected: a "
                        "test/tests/dev extra or dependency group, requirements files, npm ci)")  # fmt: skip
    parser.add_argument("--workers", metavar="K|auto", help="pytest: pytest-xdist workers per shard, planned and run "
                        "together (docs/run.md#workers) (default: -n in the project's addopts, else 1)")  # fmt: skip
    parser.add_argument("--coverage", action="store_true", help="measure coverage in every shard and fold it in "
                        "the report (default: off)")  # fmt: skip
    parser.add_argument("--select", choices=["changed"], help="changed: plan only the tests a change can break "
                        "(docs/selection.md) (default: every test)")  # fmt: skip
    parser.add_argument("--comment-workflow", action="store_true", help="also write the fork-safe PR comment "
                        "workflow, .github/workflows/ci-shards-comment.yml (default: off)")  # fmt: skip
    parser.add_argument("--dry-run", action="store_true", help="print the files instead of writing them "
                        "(default: off)")  # fmt: skip
    parser.add_argument("--force", action="store_true", help="replace files that exist (default: refuse, exit 2)")


def request_from(args: argparse.Namespace) -> InitRequest:
    return InitRequest(
        ci=Ci(args.ci),
        runner=Runner(args.runner) if args.runner else None,
        shards=args.shards,
        target_seconds=args.target_seconds,
        coverage=args.coverage,
        select_changed=args.select == "changed",
        comment_workflow=args.comment_workflow,
        python_version=args.python_version,
        install=args.install,
        workers=args.workers,
    )


def init_handler(args: argparse.Namespace) -> int:
    request = request_from(args)
    root = Path.cwd()
    planned = plan_init(request, root)
    console = console_for(os.environ)
    for finding in planned.setup.findings:
        console.line(f"{finding.subject}: {finding.value} ({finding.why})")
    for note in planned.setup.notes:
        console.warning(note)
    if args.dry_run:
        for file in planned.files:
            if len(planned.files) > 1:
                sys.stdout.write(f"# --- {file.path}\n")
            sys.stdout.write(file.text)
        return 0
    write_files(planned.files, root, force=args.force)
    for file in planned.files:
        console.line(f"wrote {file.path}")
    return 0
