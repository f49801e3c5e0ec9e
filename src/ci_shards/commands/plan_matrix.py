"""``ci-shards plan`` and ``ci-shards matrix``: the flags become ``PlanOptions``, ``plan.front.make_plan`` plans, and
the plan is written and shown here (plan.json, the table, the matrix and ``$GITHUB_OUTPUT``)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from ci_shards.common import outfile
from ci_shards.common.console import console_for
from ci_shards.common.errors import UsageError
from ci_shards.judge import check_not_empty
from ci_shards.model.plan import Plan
from ci_shards.model.planfile import load_plan
from ci_shards.options.config import load_config
from ci_shards.options.declared import PLAN_OPTIONS
from ci_shards.options.spec import given_flags
from ci_shards.options.typed import PlanOptions, plan_options
from ci_shards.plan import matrix as matrix_mod
from ci_shards.plan.front import make_plan
from ci_shards.plan.render import render_plan


def options_of(args: argparse.Namespace, cwd: Path) -> PlanOptions:
    """The plan options, built once from the flags over the config (``--config``, else the default files)."""
    return plan_options(vars(args), load_config(cwd, args.config))


def plan_command(args: argparse.Namespace) -> int:
    options = options_of(args, Path.cwd())
    plan = make_plan(options, env=os.environ, cwd=Path.cwd())
    code = emit_plan(plan, output_format=args.format, output=args.output, env=os.environ)
    check_not_empty(plan, allowed=options.allow_empty)
    return code


def emit_plan(plan: Plan, *, output_format: str, output: str | None, env: Mapping[str, str]) -> int:
    console = console_for(env)
    for note in plan.notes:
        console.notice(note)
    if output:
        outfile.write_output(output, plan.dumps())
        console.line(f"wrote {outfile.describe(output)} ({plan.total} shards, digest {plan.digest})")
    if output_format != "json":
        # with -o - stdout carries plan.json, so the table goes beside the messages, as matrix does
        (sys.stderr if outfile.is_stdout(output) else sys.stdout).write(render_plan(plan, output_format))
    elif not output:
        sys.stdout.write(plan.dumps())
    return 0


def matrix_command(args: argparse.Namespace) -> int:
    if args.plan:  # checked first: the plan decides what these would, so none is read
        given = [*given_flags(vars(args), PLAN_OPTIONS), *(["-- PYTEST_ARGS"] if args.pytest_args else [])]
        if given:
            msg = f"--plan {args.plan} cannot be combined with plan options ({', '.join(given)}): the plan decides them"
            raise UsageError(msg)
    options = options_of(args, Path.cwd())
    plan = load_plan(args.plan) if args.plan else make_plan(options, env=os.environ, cwd=Path.cwd(), cap_to_items=True)
    code = emit_matrix(plan=plan, plan_out=args.plan_out, env=os.environ)
    check_not_empty(plan, allowed=options.allow_empty)
    return code


def emit_matrix(*, plan: Plan, plan_out: str, env: Mapping[str, str]) -> int:
    if plan.total > matrix_mod.GITHUB_MATRIX_MAX:  # before anything is written: GitHub would refuse the matrix
        raise UsageError(matrix_mod.over_matrix_limit(plan.total, "matrix"))
    console = console_for(env)
    for note in plan.notes:
        console.notice(note)
    if outfile.is_stdout(plan_out):
        msg = "--plan-out -: stdout carries the matrix; name a file for plan.json"
        raise UsageError(msg)
    outfile.write_output(plan_out, plan.dumps())
    sys.stdout.write(matrix_mod.matrix_json(plan) + "\n")
    outputs = matrix_mod.job_outputs(plan)
    github_output = env.get("GITHUB_OUTPUT")
    if github_output:
        matrix_mod.append_outputs(github_output, outputs)
    console.line(f"plan {plan.digest}: {plan.total} shards, {len(plan.items)} items, written to {plan_out}")
    if outputs["empty"] == "true":
        console.warning("no items to run: the plan is empty (output empty=true)")
    sys.stderr.write(render_plan(plan, "table"))
    return 0
