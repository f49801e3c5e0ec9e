"""The CLI's subcommands, one module per stage. Each module has ``register(subparsers)``, which adds
its subcommands and sets ``handler`` (a function ``(args: argparse.Namespace) -> int``) on each."""

from __future__ import annotations

from ci_shards.commands import aggregate, coverage, gha, plan, run

MODULES = (plan, run, aggregate, coverage, gha)
