"""``ci-shards gha plan|run|aggregate|verdict|comment``: the steps of action.yml (ci_shards.gha)."""

from __future__ import annotations

import argparse

from ci_shards.gha.steps import STEPS, run_step

HELP = {
    "plan": "plan and write the matrix outputs (the action's plan step)",
    "run": "run one shard and name its artifact (the action's run step)",
    "aggregate": "aggregate, fill the job summary, output verdict and status (the action's aggregate step)",
    "verdict": "exit with aggregate's status unless fail-on-verdict is false (the action's last step)",
    "comment": "post the PR comment from another run's artifacts (the action's comment step)",
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    gha = subparsers.add_parser(
        "gha",
        help="the GitHub Action's steps (inputs from $CI_SHARDS_INPUTS)",
        description="The steps of action.yml. Each reads the action's inputs as JSON from $CI_SHARDS_INPUTS "
        "(toJSON(inputs)), runs its stage and appends to $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY.",
    )
    sub = gha.add_subparsers(dest="gha_step", metavar="STEP", parser_class=type(gha), required=True)
    for name in STEPS:
        step = sub.add_parser(name, help=HELP[name], description=HELP[name])
        step.set_defaults(handler=lambda _args, name=name: run_step(name))
