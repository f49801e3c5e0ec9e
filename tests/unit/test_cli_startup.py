"""What every subcommand's start-up loads: the command table names its handlers without importing them, and the
lazy imports kept in commands/ (docs/benchmarks.md, "Start-up time per subcommand") keep the heavy modules out of
``import ci_shards.cli``."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Sequence

import pytest

from ci_shards.commands import COMMANDS, GHA_STEPS, Later
from ci_shards.gha.steps import STEPS

# each costs every subcommand ~15 to 90 ms if the CLI loads it (docs/benchmarks.md)
HEAVY = (
    "ci_shards.report.front",
    "ci_shards.run.runner",
    "ci_shards.local",
    "ci_shards.coverage.publish",
    "coverage",
    "requests",
    "jinja2",
    "junitparser",  # no longer used by the reader
    "lxml",  # one XML parser path: expat
)

# what ``ci-shards ARGV`` imported of ci_shards' own modules, printed by the process itself at exit
PROBE = (
    "import atexit, sys\n"
    "from ci_shards.cli import main\n"
    "atexit.register(lambda: print('\\n'.join(sorted(sys.modules)), file=sys.stderr))\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def loaded_by(argv: Sequence[str]) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=False)
    return set(done.stderr.split())


def test_the_cli_loads_none_of_the_heavy_modules():
    loaded = loaded_by(["--version"])
    assert "ci_shards.cli" in loaded  # the probe sees the CLI's own modules
    assert sorted(loaded & set(HEAVY)) == []
    assert sorted(m for m in loaded if m.startswith(("ci_shards.commands.", "ci_shards.options.declared"))) == []


@pytest.mark.parametrize(
    ("argv", "module"),
    [
        (["junit", "summary", "--help"], "aggregate"),
        (["coverage", "status", "--help"], "coverage"),
        (["timings", "merge", "--help"], "timings"),
        (["init", "--help"], "init"),
    ],
)
def test_a_command_loads_only_its_own_commands_module(argv: list[str], module: str) -> None:
    commands = {m for m in loaded_by(argv) if m.startswith("ci_shards.commands.")}
    assert commands == {f"ci_shards.commands.{module}"}


def test_every_handler_the_table_names_is_a_function_of_its_module() -> None:
    named = [
        later
        for command in COMMANDS
        for later in (command.handler, command.arguments, command.reentering)
        if isinstance(later, Later)
    ]
    assert len(named) >= len(COMMANDS)  # every leaf names its handler, some their arguments too
    for later in named:
        module = importlib.import_module(f"ci_shards.commands.{later.module}")
        assert callable(getattr(module, later.function, None)), later


def test_the_tables_gha_steps_are_the_steps_the_action_runs() -> None:
    assert list(GHA_STEPS) == list(STEPS)
