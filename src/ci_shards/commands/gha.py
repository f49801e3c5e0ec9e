"""``ci-shards gha plan|run|aggregate|verdict|comment``: the steps of action.yml (ci_shards.gha)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ci_shards.gha.steps import Cli, run_step

HELP = {
    "plan": "plan and write the matrix outputs (the action's plan step)",
    "run": "run one shard and name its artifact (the action's run step)",
    "aggregate": "aggregate, fill the job summary, output verdict and status (the action's aggregate step)",
    "verdict": "exit with aggregate's status unless fail-on-verdict is false (the action's last step)",
    "comment": "post the PR comment from another run's artifacts (the action's comment step)",
}


def step_handler(name: str) -> Callable[[argparse.Namespace, Cli], int]:
    """The step's handler: it takes ``cli.main`` too, to run its stage through the CLI (``Command.reenters``)."""
    return lambda _args, cli: run_step(name, cli)
