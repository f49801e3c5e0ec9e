"""Subcommands of this stage (filled in by the stage's issue)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this stage's subcommands."""
