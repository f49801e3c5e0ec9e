"""``ci-shards gha plan|run|aggregate|verdict|comment``: the steps of action.yml (ci_shards.gha)."""

from __future__ import annotations

import argparse

from ci_shards.gha.steps import Cli, run_step


def step(args: argparse.Namespace, cli: Cli) -> int:
    """The step ``ci-shards gha STEP`` names; it takes ``cli.main`` too, to run its stage through the CLI
    (``Command.reentering``)."""
    return run_step(args.gha_command, cli)
