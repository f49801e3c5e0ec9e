"""What every subcommand's start-up loads: the lazy imports kept in commands/ (docs/benchmarks.md, "Start-up
time per subcommand") must keep the heavy modules out of ``import ci_shards.cli``."""

from __future__ import annotations

import subprocess
import sys

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


def test_the_cli_loads_none_of_the_heavy_modules():
    probe = "import sys, ci_shards.cli; print('\\n'.join(sorted(sys.modules)))"
    loaded = set(
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    )
    assert "ci_shards.commands.run" in loaded  # the probe sees the CLI's own modules
    assert sorted(loaded & set(HEAVY)) == []
