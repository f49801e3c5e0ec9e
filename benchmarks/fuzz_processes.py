"""The CLI fuzz over what tests/unit/test_cli_fuzz.py leaves out: the commands and flags that start processes.

    .venv/bin/python benchmarks/fuzz_processes.py --examples 300 --work /tmp/fuzzp

The suite's fuzz (tests/unit/test_cli_fuzz.py, its module docstring) leaves out ``local``, ``gha run``, the flags
that start Python or pytest (``--pytest``, ``--python`` of plan, matrix and run) and run's ``--coverage`` and
``--coverage-map``: each example there would start shards, a collection or coverage.py, seconds each. This sweep
draws exactly those, over the same damaged workspaces, adversarial words and environments, and holds them to the
same property (``check``: exit 0, 1 or 2, one ``ci-shards:`` line on exit 2, no traceback, untrusted text inert,
nothing garbled passed). It runs by hand (minutes), never in the suite (issue 21's budget); every violation it
finds becomes an example test there. Unlike the suite's test it does not stop at the first violation: it prints
each one (unshrunk) and a count per command at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

# The repository instead of this folder: benchmarks/coverage.py would shadow coverage.py for run --coverage (not
# there when the script runs a second time in one process, as tests/unit/test_references.py runs the docs' commands).
sys.path[:] = [p for p in sys.path if p != str(Path(__file__).resolve().parent)]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, given, settings  # noqa: E402 (after the path is set)
from hypothesis import strategies as st  # noqa: E402

from tests.unit import test_cli_fuzz as fuzz  # noqa: E402

# A valid start per process-launching command line: the drawn flags extend or override it (a later value wins).
# The seed's tests/ is a real pytest project (two passing tests, a conftest with collect_ignore).
PROCESS_STARTS: dict[tuple[str, ...], list[list[str]]] = {
    ("local",): [
        ["local", "--shards", "2", "--pytest", "--out", "lres", "--", "tests"],
        ["local", "--discover", "--shards", "2", "--pytest", "--out", "lres"],
        ["local", "--items", "items.txt", "--shards", "2", "--out", "lres", "--", "true", "{items}"],
        ["local", "--pytest"],
    ],
    ("gha", "run"): [["gha", "run"]],
    ("plan",): [["plan", "--pytest", "--shards", "2"], ["plan", "--pytest", "--discover", "--shards", "2"]],
    ("matrix",): [["matrix", "--pytest", "--shards", "2", "--plan-out", "out/plan.json"]],
    ("run",): [
        ["run", "--plan", "plan.json", "--shard", "1/2", "--out", "results", "--pytest"],
        ["run", "--plan", "plan.json", "--shard", "1/2", "--out", "results", "--pytest", "--coverage"],
        ["run", "--plan", "plan.json", "--shard", "2/2", "--out", "results", "--pytest", "--coverage-map"],
    ],
}
PYTEST_WORDS = [[], ["tests"], ["-k", "one"], ["-m", "nothing"], ["tests/test_a.py"], ["-x"], ["--co"], ["-p", "no:x"],
                ["missing_dir"], ["-o", "python_files=*.py"], ["--rootdir", "dir"]]  # fmt: skip
PYTHONS = ["python3", sys.executable, "no-such-python", "empty", "dir", "/bin/false"]


def _process_actions(path: tuple[str, ...]) -> list[argparse.Action]:
    parser = fuzz.COMMANDS.get(path) or dict(fuzz._walk(fuzz.build_parser()))[path]
    return [
        a for a in parser._actions if not fuzz.NEVER_DRAWN & set(a.option_strings) and a.nargs != argparse.REMAINDER
    ]


@st.composite
def process_cases(draw: st.DrawFn, files: list[str]) -> fuzz.Case:
    path = draw(st.sampled_from(sorted(PROCESS_STARTS)))
    argv = list(draw(st.sampled_from(PROCESS_STARTS[path])))
    for action in draw(st.lists(st.sampled_from(_process_actions(path)), max_size=3)) if path != ("gha", "run") else []:
        if "--python" in action.option_strings:
            argv += ["--python", draw(st.sampled_from(PYTHONS))]
        else:
            argv += draw(fuzz._words_for(action))
    if path != ("gha", "run") and "--" not in argv and "--pytest" in argv:
        argv += ["--", *draw(st.sampled_from(PYTEST_WORDS))]
    elif path == ("run",) and "--" not in argv:
        argv += ["--", *draw(st.sampled_from(fuzz.RUN_COMMANDS))]
    env = draw(fuzz._env(path))
    if path == ("gha", "run"):
        env.update(_gha_run_env(draw))
    return fuzz.Case(argv=argv, env=env, damages=draw(fuzz._damages(files)))


def _gha_run_env(draw: st.DrawFn) -> dict[str, str]:
    """gha run reads the plan from RUNNER_TEMP (``Folders``): the seed's plan is copied there by ``_prepare``."""
    given_inputs = draw(st.dictionaries(st.sampled_from(["shard", "timeout", "retries", "junit", "allow-empty",
                                                        "coverage", "python", "workers", "pytest", "pytest-args",
                                                        "test-command"]), fuzz.WORDS, max_size=3))  # fmt: skip
    base = draw(st.sampled_from([{"pytest": "true", "shard": "1/2"}, {"test-command": "true {items}", "shard": "2/2"}]))
    inputs = {**base, **given_inputs}
    raw = draw(st.sampled_from([json.dumps(inputs)] * 6 + ["", "{", "null"]))
    return {"CI_SHARDS_INPUTS": raw, "RUNNER_TEMP": "runner-temp"}


def _without_output_tail(err: str) -> str:
    """stderr without the failed shard's output tail (``run.shard_output.print_summary``): that is the test
    command's own output, shown on purpose (pytest's traceback when a garbled setup.cfg stops it), fenced on GitHub."""
    lines = err.splitlines()
    start = next((i for i, line in enumerate(lines) if "output tail of shard" in line), None)
    err = err if start is None else "\n".join([*lines[:start], lines[-1]]) + "\n"
    # the live output (on under GitHub Actions) streams the command's too: a traceback without a frame of
    # ci-shards' own (its plugin runs inside pytest) is the test command's, not one ci-shards let out
    return err if "/ci_shards/" in err else err.replace("Traceback", "Trace back")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--show", action="store_true", help="print each example's argv, exit and last stderr line")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "ci-shards-fuzz-processes")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    seed = fuzz.build_seed(Path(tempfile.mkdtemp(dir=args.work)) / "seed")
    plan_folder = seed / "runner-temp" / "ci-shards-plan"  # gha run reads its plan there (gha/inputs.Folders)
    plan_folder.mkdir(parents=True)
    (plan_folder / "plan.json").write_text((seed / "plan.json").read_text())
    scratch = Path(tempfile.mkdtemp(dir=args.work))
    violations: list[str] = []
    drawn: Counter[str] = Counter()
    bad: Counter[str] = Counter()
    started = time.monotonic()

    @settings(max_examples=args.examples, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(case=process_cases(fuzz.SEED_FILES))
    def sweep(case: fuzz.Case) -> None:
        command = " ".join(case.argv[:2] if case.argv[0] == "gha" else case.argv[:1])
        drawn[command] += 1
        try:
            code, out, err = fuzz.run_case(seed, scratch, case)
            if args.show:
                print(f"{code} {case.argv!r} :: {(err.strip().splitlines() or [''])[-1][:160]}", flush=True)
            fuzz.check(case, code, out, _without_output_tail(err))
        except BaseException as err:  # a sweep reports every violation, whatever it is
            bad[command] += 1
            detail = traceback.format_exception_only(err)[-1][:3000]
            violations.append(detail)
            print(f"VIOLATION {command}: {detail}", flush=True)

    sweep()
    print(f"{sum(drawn.values())} examples in {time.monotonic() - started:.0f} s; {len(violations)} violations")
    for command, count in sorted(drawn.items()):
        print(f"  {command}: {count} drawn, {bad[command]} violating")
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
