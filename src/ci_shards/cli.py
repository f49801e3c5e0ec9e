"""The command line: builds the parser, dispatches, and maps errors to exit codes.

This is the only module that reads ``sys.argv`` or decides an exit code. Each subcommand lives in
``ci_shards.commands.<stage>`` and calls one stage function with explicit keyword arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ci_shards import __version__
from ci_shards.commands import MODULES
from ci_shards.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, CiShardsError

DEBUG_HELP: Final = "show tracebacks on errors; anywhere before -- (default: off)"


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors go through one path (exit 2), and
    takes only whole option names: an abbreviation (``--retr``) silently meaning ``--retries`` today
    would mean something else once another option starts the same way."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        # main() prefixes "ci-shards: "; name the subcommand once ("ci-shards: matrix: ...")
        command = self.prog.removeprefix("ci-shards").strip()
        msg = f"{command}: {message}" if command else message
        raise CiShardsError(msg)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ci-shards",
        description="Split a test suite into balanced shards, run them, and merge the results.",
    )
    parser.add_argument("--version", action="version", version=f"ci-shards {__version__}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in MODULES:
        module.register(subparsers)
    _add_debug(subparsers)
    return parser


def _add_debug(subparsers: argparse._SubParsersAction[Any]) -> None:
    """``--debug`` after the subcommand too (``ci-shards run ... --debug``), at every level. SUPPRESS:
    a subcommand's default must not overwrite ``--debug`` given before it."""
    for sub in subparsers.choices.values():
        if "--debug" not in sub._option_string_actions:
            sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                _add_debug(action)


def _debug_requested(args: Sequence[str], env: Mapping[str, str]) -> bool:
    """``--debug`` among ci-shards' own words: those after ``--`` belong to the test command."""
    own = args[: args.index("--")] if "--" in args else args
    return "--debug" in own or env.get("CI_SHARDS_DEBUG") == "1"


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = _debug_requested(args_list, os.environ)
    try:
        parser = build_parser()
        args = parser.parse_args(args_list)
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return _flush_stdout(int(handler(args)))
    except CiShardsError as err:
        if debug:
            traceback.print_exc()
        print(f"ci-shards: {err}", file=sys.stderr)
        return err.exit_code
    except SystemExit as exit_:  # --help / --version
        return _flush_stdout(exit_.code if isinstance(exit_.code, int) else 0)
    except KeyboardInterrupt:
        print("ci-shards: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return _stdout_gone()
    except Exception as err:  # the one place that turns a bug into exit 3
        if debug:
            traceback.print_exc()
        print(
            f"ci-shards: internal error: {type(err).__name__}: {err} (a bug; rerun with --debug for a traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _flush_stdout(code: int) -> int:
    """Flush stdout while a closed reader can still be handled here: left to the interpreter's exit, the
    flush would print "Exception ignored ... BrokenPipeError" and turn the exit code into 120."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return _stdout_gone()
    return code


def _stdout_gone() -> int:
    """The reader of stdout left (``ci-shards plan | head -1``): stop without a word. Exit 2, as for any output
    that cannot be written, since the command's work may be unfinished. stdout now points at /dev/null, so
    what is still buffered cannot fail again at exit."""
    with contextlib.suppress(OSError, ValueError):  # no real stdout (pytest's capture): nothing to redirect
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_USAGE
