"""The command line: builds the parser, dispatches, and maps errors to exit codes.

This is the only module that reads ``sys.argv`` or decides an exit code. The subcommands are the table
``ci_shards.commands.COMMANDS``; their options are declared in ``ci_shards.options.declared``.
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
from ci_shards.commands import COMMANDS, Command
from ci_shards.common.console import one_line
from ci_shards.common.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, CiShardsError, UsageError

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


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand in ``commands.COMMANDS``, each with its options and ``--debug``. Given the
    ``argv`` it will parse, only the command that argv names gets its options (and imports its module): the others
    are still listed, with their help, as argparse would list them anyway."""
    parser = _Parser(
        prog="ci-shards",
        description="Split a test suite into balanced shards, run them, and merge the results.",
    )
    parser.add_argument("--version", action="version", version=f"ci-shards {__version__}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    parsers: dict[tuple[str, ...], argparse.ArgumentParser] = {(): parser}
    groups: dict[tuple[str, ...], Any] = {(): parser.add_subparsers(dest="command", metavar="COMMAND")}
    named = None if argv is None else _command_word(argv)
    for command in COMMANDS:
        sub = groups[command.path[:-1]].add_parser(command.name, help=command.help, description=command.description)
        if command.hidden:
            _unlist(groups[command.path[:-1]], command.name)
        parsers[command.path] = sub
        if named is None or command.path[0] == named:
            _add_arguments(sub, command)
        if command.handler is None and command.reentering is None:
            groups[command.path] = sub.add_subparsers(
                dest=f"{command.name}_command", metavar=command.metavar, required=command.required
            )
            if not command.required:
                sub.set_defaults(handler=lambda _args, sub=sub: _group_help(sub))
    return parser


def _command_word(argv: Sequence[str]) -> str:
    """The subcommand ``argv`` names: its first word that is not an option. Every option of the top-level parser
    is a flag (--version, --debug, --help), so no option's value can be taken for it ("" when there is none)."""
    for word in argv:
        if word == "--":
            break
        if not word.startswith("-"):
            return word
    return ""


def _add_arguments(sub: argparse.ArgumentParser, command: Command) -> None:
    """``command``'s options, ``--debug`` and handler on its parser."""
    if command.declared:
        # here, not at the top: the declarations import the stages' models (~50 ms) that --version and the
        # undeclared commands never need
        from ci_shards.options.declared import OPTIONS  # noqa: PLC0415
        from ci_shards.options.spec import add_options, for_command  # noqa: PLC0415

        add_options(sub, for_command(OPTIONS, command.name))
    if command.arguments is not None:
        command.arguments(sub)
    # --debug after the subcommand too (``ci-shards run ... --debug``). SUPPRESS: a subcommand's default
    # must not overwrite ``--debug`` given before it.
    sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
    if command.reentering is not None:
        sub.set_defaults(handler=lambda args, step=command.reentering: step(args, main))
    elif command.handler is not None:
        sub.set_defaults(handler=command.handler)


def _unlist(subparsers: Any, name: str) -> None:
    """``name`` still parses but leaves its parent's --help. ``help=argparse.SUPPRESS`` prints
    ``==SUPPRESS==`` for a subparser before Python 3.14 (bpo-22848), so its row is taken out of the
    listing argparse keeps for the help (``_choices_actions``), the one private name read here."""
    subparsers._choices_actions[:] = [a for a in subparsers._choices_actions if a.dest != name]


def _group_help(parser: argparse.ArgumentParser) -> int:
    """A group without its subcommand (``ci-shards junit``): its help, and exit 2."""
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _debug_requested(args: Sequence[str], env: Mapping[str, str]) -> bool:
    """``--debug`` among ci-shards' own words: those after ``--`` belong to the test command."""
    own = args[: args.index("--")] if "--" in args else args
    return "--debug" in own or env.get("CI_SHARDS_DEBUG") == "1"


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = _debug_requested(args_list, os.environ)
    try:
        _require_utf8(args_list)
        parser = build_parser(args_list)
        args = parser.parse_args(args_list)
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return _flush_stdout(int(handler(args)))
    except CiShardsError as err:
        if debug:
            traceback.print_exc()
        print(f"ci-shards: {one_line(str(err))}", file=sys.stderr)
        return err.exit_code
    except SystemExit as exit_:  # --help / --version
        return _flush_stdout(exit_.code if isinstance(exit_.code, int) else 0)
    except KeyboardInterrupt:
        print("ci-shards: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return _stdout_gone()
    except OSError as err:
        if err.filename is None:  # not about a file: a bug's, or the system's, and exit 3 below says so
            return _internal_error(err, debug)
        # a path the file system refuses (a name too long, a loop of links, a permission, a full disk): an input
        # or environment fault, named like every other (most readers say it in their own words; this is the net
        # for a check such as Path.exists(), which raises on ENAMETOOLONG before any reader runs)
        if debug:
            traceback.print_exc()
        print(f"ci-shards: {one_line(f'{err.filename}: {err.strerror or err}')}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as err:  # the one place that turns a bug into exit 3
        return _internal_error(err, debug)


def _internal_error(err: Exception, debug: bool) -> int:
    if debug:
        traceback.print_exc()
    print(
        f"ci-shards: internal error: {type(err).__name__}: {one_line(str(err))} (a bug; rerun with --debug for a "
        "traceback)",
        file=sys.stderr,
    )
    return EXIT_INTERNAL


def _require_utf8(args: Sequence[str]) -> None:
    """ci-shards' own words (those before ``--``) as UTF-8 text. A byte that is not UTF-8 in one (a path from a
    Latin-1 file system) reaches Python as a lone surrogate, which no plan, JUnit or CI file can hold: refused here
    rather than failing half way through a write. The test command's words after ``--`` pass as given."""
    own = args[: args.index("--")] if "--" in args else args
    for word in own:
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:
            shown = word.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            msg = f"argument '{shown}' is not UTF-8 text (ci-shards reads and writes UTF-8 only)"
            raise UsageError(msg) from None


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
