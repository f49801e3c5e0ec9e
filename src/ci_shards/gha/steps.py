"""``ci-shards gha plan|run|aggregate|verdict|comment``: one step of action.yml each (the I/O edge).

Each reads the inputs from ``$CI_SHARDS_INPUTS`` and the runner's own variables, runs its stage in-process through
``cli.main`` (so errors and exit codes are the CLI's), and appends to ``$GITHUB_OUTPUT`` / ``$GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from ci_shards.common.errors import EXIT_INTERNAL, UsageError
from ci_shards.gha.inputs import (
    INPUTS_ENV,
    Folders,
    aggregate_argv,
    comment_argv,
    is_true,
    parse_inputs,
    plan_argv,
    run_argv,
    shard_artifact_name,
    step_exit,
    timings_path,
    verdict_of,
)
from ci_shards.plan.matrix import append_outputs


def _runner_temp(env: Mapping[str, str]) -> Folders:
    temp = env.get("RUNNER_TEMP", "")
    if not temp:
        msg = "gha: RUNNER_TEMP is not set (these are action.yml's steps; elsewhere use plan/run/aggregate)"
        raise UsageError(msg)
    return Folders(Path(temp))


def _outputs(env: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    path = env.get("GITHUB_OUTPUT", "")
    if path:
        append_outputs(path, outputs)


def _cli(argv: list[str]) -> int:
    # A step re-enters the CLI (same errors, exit codes, --debug) and the CLI registers the steps: importing at
    # call time is what keeps that from being an import cycle.
    from ci_shards.cli import main  # noqa: PLC0415

    return main(argv)


def gha_plan(env: Mapping[str, str]) -> int:
    inputs = parse_inputs(env.get(INPUTS_ENV, ""))
    folders = _runner_temp(env)
    argv = plan_argv(inputs, folders, timings_exist=Path(timings_path(inputs)).is_file())
    Path(folders.plan).parent.mkdir(parents=True, exist_ok=True)
    return _cli(argv)


def gha_run(env: Mapping[str, str]) -> int:
    """Run the shard, then name its artifact (also when its tests failed: the folder goes up either way)."""
    inputs = parse_inputs(env.get(INPUTS_ENV, ""))
    folders = _runner_temp(env)
    status = _cli(run_argv(inputs, folders))
    results = Path(folders.results)
    found = [p.name for p in results.iterdir() if p.is_dir()] if results.is_dir() else []
    name = shard_artifact_name(
        inputs.get("artifact-prefix", "") or "ci-shards", found, env.get("GITHUB_RUN_ATTEMPT", "")
    )
    if name is None:
        print(f"::warning title=ci-shards::no shard folder under {results}; aggregate reports it as never-started")
    else:
        _outputs(env, {"artifact-name": name})
    return status


def gha_aggregate(env: Mapping[str, str]) -> int:
    """Aggregate and publish the verdict as outputs; the step itself passes, so the report is uploaded and the
    timings saved before the Verdict step fails the job."""
    inputs = parse_inputs(env.get(INPUTS_ENV, ""))
    folders = _runner_temp(env)
    report = Path(folders.report)
    for folder in (report, Path(folders.shards), Path(timings_path(inputs)).parent):
        folder.mkdir(parents=True, exist_ok=True)
    _outputs(env, {"summary-path": str(report / "summary.md")})
    status = _cli(aggregate_argv(inputs, folders))
    summary, job_summary = report / "summary.md", env.get("GITHUB_STEP_SUMMARY", "")
    if summary.is_file() and job_summary:
        with Path(job_summary).open("a", encoding="utf-8") as handle:
            handle.write(summary.read_text(encoding="utf-8"))
    _outputs(env, {"verdict": verdict_of(status).value, "status": str(status)})
    return 0


def gha_verdict(env: Mapping[str, str]) -> int:
    """The last step: aggregate's exit code (``STATUS``, its output), unless fail-on-verdict is false."""
    inputs = parse_inputs(env.get(INPUTS_ENV, ""))
    raw = env.get("STATUS", "")
    status = int(raw) if raw.isdigit() else EXIT_INTERNAL  # aggregate's step did not finish: not a pass
    verdict = verdict_of(status).value
    print(f"ci-shards verdict: {verdict} (exit {status})")
    code = step_exit(status, fail_on_verdict=is_true(inputs, "fail-on-verdict", default=True))
    if code != status:
        print(f"::warning title=ci-shards::verdict {verdict}, not failing the step (fail-on-verdict: false)")
    return code


def gha_comment(env: Mapping[str, str]) -> int:
    inputs = parse_inputs(env.get(INPUTS_ENV, ""))
    folders = _runner_temp(env)
    Path(folders.shards).mkdir(parents=True, exist_ok=True)
    return _cli(comment_argv(inputs, folders))


STEPS: dict[str, Callable[[Mapping[str, str]], int]] = {
    "plan": gha_plan,
    "run": gha_run,
    "aggregate": gha_aggregate,
    "verdict": gha_verdict,
    "comment": gha_comment,
}


def run_step(name: str) -> int:
    env = dict(os.environ)
    # The inputs hold github-token: the test command (and pytest's collection) must not inherit them.
    os.environ.pop(INPUTS_ENV, None)
    sys.stdout.flush()
    return STEPS[name](env)
