"""Faults between the stages (issue 20): every file one stage hands to the next, broken one way at a
time, and the stage that reads it replayed. By hand; the table goes to docs/benchmarks.md.

    .venv/bin/python benchmarks/faults.py [--work /tmp/ci-shards-faults] [--seed 20] [--random 3]
        [--jobs 2] [--only TEXT] [--json-out FILE]

1. One clean flow of a small real project (git, a package, 4 test files, a conftest): ``plan --pytest
   --shards 3 --granularity file``, the 3 shards with ``run --pytest --coverage --retries 1`` (a flaky
   test fails its first attempt, a failing test fails every time), then ``aggregate`` with
   ``--timings-out --record-history`` to make the timings store. A second commit changes one source
   file (for ``--select changed``). Then the same project planned another way (``--granularity test``:
   another plan, its own shard folders), and each shard of the first plan run again as attempt 2: the
   files "from another plan" and "from another attempt".
2. The clean answers: ``aggregate`` with every output (``--history`` the store, ``--timings-out``,
   ``--coverage-out``, ``--junit-out``, ``--summary``, ``--failures``, ``--format json``) and the
   plan jobs that read the store (``--durations``, ``--cached-durations``) and the coverage map
   (``--select changed --select-coverage``).
3. One case per file x fault (x shard, x seeded random position): a copy of the clean folder, the
   fault, the reading stage replayed. Process faults run the real stage: ``run`` SIGKILLed at each
   moment (tests/e2e/run/kill_harness.py), ``aggregate`` SIGKILLed while writing each output and
   run again, outputs on a full disk (a small tmpfs; ``ulimit -f``).

Every case's expected answer is data (``EXPECT``), written before the campaign ran: the faulted
shard's status, its coverage state, the exit code, the file the message names. On top, every case
is checked for: no traceback; exit 2 only with a line naming the file; never data hidden (a shard
counted as a success with other tests than the clean run, more tests than the clean run, exit 0
where the clean run fails, a complete coverage figure other than the clean one, a plan with other
items, a selection running fewer tests); every output written when the verdict was reached.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fault_kinds import BYTE_FAULTS, SHAPES, Fault

REPO: Final = Path(__file__).resolve().parent.parent
HARNESS: Final = REPO / "tests" / "e2e" / "run" / "kill_harness.py"
# perm 000 binds root too once it lacks these capabilities (capabilities(7)); a nobody user cannot run
# this venv's Python when it lives under /root
NO_OVERRIDE: Final = ("setpriv", "--bounding-set=-dac_override,-dac_read_search")
SAME: Final = "same"  # as in the clean run
ANY: Final = "any"  # no expectation beyond the general checks

PROJECT: Final = {
    "pkg/__init__.py": "",
    "pkg/calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    if a < b:\n        return -(b - a)\n"
    "    return a - b\n",
    "pkg/text.py": "def shout(text):\n    return text.upper()\n\n\ndef whisper(text):\n    return text.lower()\n",
    # the mid-test moment: the CI machine is lost while a test runs (run and pytest die together)
    "conftest.py": """\
        import os
        import signal


        def pytest_runtest_call(item):
            if os.environ.get("CI_SHARDS_FAULT") == "mid-test":
                os.kill(int(os.environ["CI_SHARDS_FAULT_PID"]), signal.SIGKILL)
                os.killpg(0, signal.SIGKILL)
        """,
    "tests/test_calc.py": "from pkg.calc import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
    "def test_sub():\n    assert sub(1, 2) == -1\n",
    "tests/test_flaky.py": """\
        from pathlib import Path

        from pkg.text import shout

        MARK = Path(__file__).with_name(".flaky-ran")


        def test_flaky():
            first = not MARK.exists()
            MARK.touch()
            assert not first, "fails its first attempt only"
            assert shout("a") == "A"
        """,
    "tests/test_fail.py": "from pkg.calc import add\n\n\ndef test_fails():\n    assert add(1, 1) == 3\n\n\n"
    "def test_ok():\n    assert add(0, 0) == 0\n",
    "tests/test_text.py": "from pkg.text import whisper\n\n\ndef test_whisper():\n    assert whisper('A') == 'a'\n",
}
RUN_FLAGS: Final = ("--pytest", "--coverage", "--retries", "1", "--no-live")
OUTPUTS: Final = ("out/merged.xml", "out/cov/coverage.json", "out/store.json", "out/summary.md", "out/failures.jsonl")
AGGREGATE: Final = (
    "aggregate", "--plan", "plan.json", "res", "--history", "store.json", "--timings-out", "out/store.json",
    "--record-history", "--coverage-out", "out/cov", "--junit-out", "out/merged.xml", "--summary", "out/summary.md",
    "--failures", "out/failures.jsonl", "--format", "json",
)  # fmt: skip
PLAN_WITH: Final = {
    "durations": ("plan", "--pytest", "--shards", "3", "--durations", "store.json", "--format", "json"),
    "cached-durations": ("plan", "--pytest", "--shards", "3", "--cached-durations", "store.json", "--format", "json"),
    "select-coverage": (
        "plan", "--pytest", "--shards", "3", "--select", "changed", "--base", "HEAD~1",
        "--select-coverage", "prev-coverage.json", "--format", "json",
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Expect:
    """The answer written down before the case runs (``SAME``: as in the clean run; ``ANY``: unchecked)."""

    exit: frozenset[int]
    status: frozenset[str] = frozenset({ANY})  # the faulted shard's status
    coverage: frozenset[str] = frozenset({ANY})  # the faulted shard's coverage state
    names: str = ""  # a line of stderr names this file when the answer is not the clean one


def expect(exit: set[int], status: Sequence[str] = (ANY,), coverage: Sequence[str] = (ANY,), names: str = "") -> Expect:
    return Expect(frozenset(exit), frozenset(status), frozenset(coverage), names)


UNREADABLE = ("deleted", "empty", "truncated", "field missing", "wrong type", "perm 000")
LOST_SHARD = expect({1}, ["error"], ["never-started"], "outcome.json")
BAD_JUNIT = expect({1}, ["failed", "error"], [SAME, "incomplete"], "junit.xml")
EXPECT: Final[dict[tuple[str, str], Expect]] = {
    **{("outcome.json", f): LOST_SHARD for f in UNREADABLE},
    ("outcome.json", "flipped"): expect({1}, ["error", "never-started", SAME], ["never-started", SAME]),
    ("outcome.json", "extra shard"): expect({1}, ["error", "never-started"], ["never-started"]),
    # after the first run: these three named the file; the product's phrases (here) were judged as clear
    ("outcome.json", "other plan"): expect({1}, ["error", "never-started"], ["never-started"], "another plan"),
    ("outcome.json", "other attempt"): expect({1}),
    **{("junit.xml", f): BAD_JUNIT for f in UNREADABLE},
    ("junit.xml", "field missing"): expect({1}, ["failed", "error"], [SAME, "incomplete"], "unverified"),
    ("junit.xml", "wrong type"): expect({1}, ["failed", "error"], [SAME, "incomplete"], "no tests ran"),
    ("junit.xml", "flipped"): expect({1}, ["failed", "error", SAME], [SAME, "incomplete"]),
    ("junit.xml", "extra shard"): expect({1}, ["failed", SAME], [SAME, "incomplete"], "test_ghost"),
    ("junit.xml", "other plan"): expect({1}, ["failed", "error", SAME], [SAME, "incomplete"]),
    ("junit.xml", "other attempt"): expect({1}),
    **{("failures.jsonl", f): expect({1}, [SAME], [SAME]) for f in (*UNREADABLE, "flipped", "extra shard")},
    **{("failures.jsonl", f): expect({1}, [SAME], [SAME]) for f in ("other plan", "other attempt")},
    **{("output.log", f): expect({1}, [SAME], [SAME]) for f in (*UNREADABLE, "flipped", "other plan", "other attempt")},
    ("coverage data", "deleted"): expect({1}, [SAME], ["lost"], "coverage"),
    **{("coverage data", f): expect({1}, [SAME], ["corrupt", "lost"], "coverage") for f in UNREADABLE[1:]},
    ("coverage data", "flipped"): expect({1}, [SAME], ["corrupt", "lost", SAME]),
    ("coverage data", "other plan"): expect({1}, [SAME], ["lost"], "coverage"),
    ("coverage data", "other attempt"): expect({1}, [SAME], ["lost"], "coverage"),
    ("coverage folder", "deleted"): expect({1}, [SAME], ["lost"], "coverage"),
    ("coverage folder", "emptied"): expect({1}, [SAME], ["lost"], "coverage"),
    ("coverage folder", "stray file"): expect({1}, [SAME], [SAME]),
    ("coverage folder", "perm 000"): expect({1}, [SAME], ["lost", "corrupt"], "coverage"),
    ("shard folder", "duplicated"): expect({1}, [SAME], [SAME]),
    ("shard folder", "two attempts"): expect({1}),
    **{("plan.json", f): expect({2}, names="plan.json") for f in (*UNREADABLE, "extra shard")},
    ("plan.json", "flipped"): expect({1, 2}, names="plan.json"),
    ("plan.json", "other plan"): expect({1}, ["error", "never-started"], ["never-started"]),
    **{("store: --durations", f): expect({2}, names="store.json") for f in UNREADABLE},
    **{("store: --durations", f): expect({0, 2}, names="store.json") for f in ("flipped", "extra shard", "other plan")},
    **{
        ("store: --cached-durations", f): expect({0}, names="store.json")
        for f in (*UNREADABLE, "flipped", "extra shard", "other plan")
    },
    **{("store: --history", f): expect({1, 2}, [SAME], [SAME], "store.json") for f in (*UNREADABLE, "extra shard")},
    **{("store: --history", f): expect({1, 2}, [SAME], [SAME]) for f in ("flipped", "other plan")},
    **{
        ("coverage.json: --select-coverage", f): expect({0, 2}, names="prev-coverage.json")
        for f in (*UNREADABLE, "flipped", "extra shard", "other plan")
    },
    **{("run killed", m): LOST_SHARD for m in ("before-command", "mid-test")},
    **{("run killed", f"writing {n}"): LOST_SHARD for n in ("junit.xml", "failures.jsonl", "outcome.json")},
    **{("aggregate killed", f"writing {Path(o).name}"): expect({1}, [SAME], [SAME]) for o in OUTPUTS},
    **{("disk full", f): expect({1, 2}, [SAME], [SAME], "out/") for f in ("tmpfs", "ulimit -f")},
    ("disk full", "run's tmpfs"): expect({1, 2}, ["error", "failed", SAME]),
}


@dataclass(frozen=True)
class Case:
    target: str  # the file (or folder, or process) faulted
    fault: str
    shard: int | None  # the shard whose file it is
    variant: int = 0  # which seeded random position
    stage: str = "aggregate"  # aggregate | durations | cached-durations | select-coverage | special

    @property
    def name(self) -> str:
        return f"{self.target}/{self.fault}/{self.shard or '-'}/{self.variant}".replace(" ", "_").replace(":", "")


@dataclass
class Result:
    case: Case
    code: int
    problems: list[str] = field(default_factory=list)
    hidden: bool = False
    traceback: bool = False
    seconds: float = 0.0


# ---------------------------------------------------------------------------------------------
# running


def ci_shards(
    root: Path, *args: str, env: Mapping[str, str] | None = None, moment: str = "none", bound: bool = False,
    fsize: int | None = None,
) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """``ci-shards ARGS`` in ``root`` through the kill harness (``moment``), ``bound`` by permission bits,
    under ``ulimit -f``."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "COVERAGE_", "CI_SHARDS"))}
    full.update(env or {})
    argv = [*(NO_OVERRIDE if bound else ()), sys.executable, str(HARNESS), moment, *args]

    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run(
        argv, cwd=root, env=full, capture_output=True, text=True, timeout=300, check=False, preexec_fn=limit
    )


def run_shard(root: Path, index: int, total: int, *, out: str = "res", plan: str = "plan.json", **kw: Any) -> int:
    (root / "tests" / ".flaky-ran").unlink(missing_ok=True)  # the flaky test fails the first attempt of each run
    done = ci_shards(root, "run", "--plan", plan, "--shard", f"{index}/{total}", *RUN_FLAGS, "--out", out, **kw)
    return done.returncode


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=f@f", "-c", "user.name=f", *args], cwd=root, check=True, capture_output=True
    )


OTHER_RUN_FAULTS: Final = ("other plan", "other attempt", "stray file")  # faults that copy from resA2 / resB


def needs_other_runs(case: Case) -> bool:
    """Whether ``case`` reads the second attempt's or the other plan's runs (``resA2``, ``resB``, planB's files):
    every case but an aggregate replay of a fault of the first run's own files. A ``--only`` sample without
    them skips those six shard runs (the slow test's sample: tests/e2e/test_faults_campaign.py)."""
    return case.stage != "aggregate" or case.fault in OTHER_RUN_FAULTS or case.target == "shard folder"


def build_flow(work: Path, *, other_runs: bool = True) -> Path:
    """The clean flow (docstring, 1.) in ``work/base``; returns the project folder. ``other_runs=False``: the
    first run only (plan.json, res, its store and coverage), for cases that read nothing else."""
    root = work / "base"
    if root.exists():
        shutil.rmtree(root)
    for name, text in PROJECT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    plans = (("plan.json", "file"), ("planB.json", "test"))
    for plan, granularity in plans if other_runs else plans[:1]:
        done = ci_shards(root, "plan", "--pytest", "--shards", "3", "--granularity", granularity, "-o", plan)
        assert done.returncode == 0, done.stderr
    for index in (1, 2, 3):
        run_shard(root, index, 3)
        if other_runs:
            run_shard(root, index, 3, out="resA2", env={"GITHUB_RUN_ATTEMPT": "2", "GITHUB_RUN_ID": "7"})
            run_shard(root, index, 3, out="resB", plan="planB.json")
    seed = ci_shards(root, "aggregate", "--plan", "plan.json", "res", "--timings-out", "store.json",
                     "--record-history", "--coverage-out", "cov")  # fmt: skip
    assert seed.returncode == 1, seed.stderr  # the failing test
    shutil.copy(root / "cov" / "coverage.json", root / "prev-coverage.json")
    shutil.rmtree(root / "cov")
    if other_runs:
        seed_b = ci_shards(root, "aggregate", "--plan", "planB.json", "resB", "--timings-out", "storeB.json",
                           "--coverage-out", "covB")  # fmt: skip
        assert seed_b.returncode == 1, seed_b.stderr
        shutil.copy(root / "covB" / "coverage.json", root / "prev-coverageB.json")
        shutil.rmtree(root / "covB")
    # the change under review (for --select changed): after the runs, so the map is fresh at the base
    (root / "pkg" / "text.py").write_text(PROJECT["pkg/text.py"] + "\n\ndef echo(text):\n    return text\n")
    git(root, "commit", "-qam", "change")
    return root


# ---------------------------------------------------------------------------------------------
# the answers


@dataclass(frozen=True)
class Answer:
    code: int
    stderr: str
    verdict: dict[str, Any] | None  # aggregate --format json
    coverage: dict[str, Any] | None  # out/cov/coverage.json
    items: tuple[str, ...] | None  # a plan's items (plan --format json)
    outputs: dict[str, str]  # output -> "" when present and readable, else what is wrong


def read_outputs(root: Path) -> dict[str, str]:
    found = {}
    for name in OUTPUTS:
        path = root / name
        try:
            data = path.read_bytes()
            if name.endswith(".xml"):
                ET.fromstring(data)
            elif name.endswith(".json"):
                json.loads(data)
            elif name.endswith(".jsonl"):
                [json.loads(line) for line in data.splitlines() if line.strip()]
            found[name] = ""
        except FileNotFoundError:
            found[name] = "missing"
        except (OSError, ValueError, ET.ParseError) as err:
            found[name] = f"unreadable: {err}"
    return found


def answer_of(root: Path, done: subprocess.CompletedProcess[str]) -> Answer:
    data: Any = None
    with contextlib.suppress(ValueError):
        data = json.loads(done.stdout) if done.stdout.strip() else None
    coverage = None
    with contextlib.suppress(OSError, ValueError):
        coverage = json.loads((root / "out" / "cov" / "coverage.json").read_text(encoding="utf-8"))
    is_plan = isinstance(data, dict) and str(data.get("schema", "")).startswith("ci-shards/plan")
    items = tuple(sorted(i for s in data["shards"] for i in s["items"])) if is_plan else None
    verdict = data if isinstance(data, dict) and not is_plan else None
    return Answer(done.returncode, done.stderr, verdict, coverage, items, read_outputs(root))


def replay(root: Path, stage: str, **kw: Any) -> Answer:
    args = AGGREGATE if stage == "aggregate" else PLAN_WITH[stage]
    return answer_of(root, ci_shards(root, *args, **kw))


# ---------------------------------------------------------------------------------------------
# the faults


SHARD_FILES: Final = ("outcome.json", "junit.xml", "failures.jsonl", "output.log", "coverage data")
SHAPE_KEY: Final = {
    "store: --durations": "timings store",
    "store: --cached-durations": "timings store",
    "store: --history": "timings store",
    "coverage.json: --select-coverage": "coverage.json",
}
GLOBAL_FILES: Final = {  # target -> (stage, file, the same file of the other plan)
    "plan.json": ("aggregate", "plan.json", "planB.json"),
    "store: --durations": ("durations", "store.json", "storeB.json"),
    "store: --cached-durations": ("cached-durations", "store.json", "storeB.json"),
    "store: --history": ("aggregate", "store.json", "storeB.json"),
    "coverage.json: --select-coverage": ("select-coverage", "prev-coverage.json", "prev-coverageB.json"),
}
KILL_MOMENTS: Final = {  # the case's name -> kill_harness.py's moment
    "before-command": "before-command",
    "mid-test": "mid-test",
    **{f"writing {n}": f"writing:{n}" for n in ("junit.xml", "failures.jsonl", "outcome.json")},
}


def shard_dir(root: Path, index: int, res: str = "res") -> Path:
    return root / res / f"shard-{index}-of-3"


def data_files(folder: Path) -> list[Path]:
    """The coverage data files a shard folder's outcome.json lists."""
    entry = json.loads((folder / "outcome.json").read_text(encoding="utf-8"))["coverage"]
    return [folder / entry["data"] / name for name in entry["files"]]


def file_cases(target: str, shard: int | None, random_n: int) -> list[Case]:
    stage = GLOBAL_FILES[target][0] if target in GLOBAL_FILES else "aggregate"
    faults = ["deleted", "empty"]
    shapes = SHAPES.get(SHAPE_KEY.get(target, target), {})
    found = [Case(target, f, shard, stage=stage) for f in faults]
    found += [Case(target, f, shard, v, stage) for f in ("truncated", "flipped") for v in range(random_n)]
    found += [Case(target, f, shard, stage=stage) for f in [*shapes, "other plan", "perm 000"]]
    if shard is not None:
        found.append(Case(target, "other attempt", shard, stage=stage))
    return found


def all_cases(random_n: int) -> list[Case]:
    found: list[Case] = []
    for shard in (1, 2, 3):
        for target in SHARD_FILES:
            found += file_cases(target, shard, random_n)
        found += [Case("coverage folder", f, shard) for f in ("deleted", "emptied", "stray file", "perm 000")]
        found += [Case("shard folder", f, shard) for f in ("duplicated", "two attempts")]
        found += [Case("run killed", m, shard, stage="special") for m in KILL_MOMENTS]
    for target in GLOBAL_FILES:
        found += file_cases(target, None, random_n)
    found += [Case("aggregate killed", f"writing {Path(o).name}", None, stage="special") for o in OUTPUTS]
    found += [Case("disk full", "tmpfs", None, v, "special") for v in range(4)]
    found += [Case("disk full", "ulimit -f", None, v, "special") for v in range(4)]
    found += [Case("disk full", "run's tmpfs", s, 0, "special") for s in (1, 2)]
    return found


def rng_for(seed: int, case: Case) -> random.Random:
    return random.Random(f"{seed}/{case.name}")


def break_file(path: Path, case: Case, rng: random.Random, other: Path | None) -> bool:
    """Put ``case.fault`` into ``path``; True when the replay must run bound by permission bits."""
    shapes = SHAPES.get(SHAPE_KEY.get(case.target, case.target), {})
    if case.fault == "perm 000":
        path.chmod(0)
        return True
    if case.fault in ("other plan", "other attempt"):
        assert other is not None
        shutil.copyfile(other, path)
        return False
    fault: Fault = BYTE_FAULTS.get(case.fault) or shapes[case.fault]
    new = fault(path.read_bytes(), rng)
    if new is None:
        path.unlink()
    else:
        path.write_bytes(new)
    return False


def break_coverage(root: Path, case: Case, rng: random.Random) -> bool:
    folder = shard_dir(root, case.shard or 0)
    listed = data_files(folder)
    if case.target == "coverage data" and case.fault not in ("other plan", "other attempt"):
        return break_file(listed[0], case, rng, None)
    source = shard_dir(root, case.shard or 0, "resB" if case.fault == "other plan" else "resA2")
    if case.fault in ("other plan", "other attempt"):  # their data files, under their own names
        for path in listed:
            path.unlink()
        for path in data_files(source):
            shutil.copy(path, folder / "coverage" / path.name)
    elif case.fault == "deleted":
        shutil.rmtree(folder / "coverage")
    elif case.fault == "emptied":
        for path in (folder / "coverage").iterdir():
            path.unlink()
    elif case.fault == "stray file":  # another attempt's data file beside this run's
        shutil.copy(data_files(shard_dir(root, case.shard or 0, "resA2"))[0], folder / "coverage" / "coverage-py.stray")
    elif case.fault == "perm 000":
        (folder / "coverage").chmod(0)
        return True
    return False


def break_shard_folder(root: Path, case: Case) -> None:
    index = case.shard or 0
    copy = root / "res" / f"ci-shards-shard-{index}-of-3-a2" / f"shard-{index}-of-3"
    source = shard_dir(root, index) if case.fault == "duplicated" else shard_dir(root, index, "resA2")
    shutil.copytree(source, copy)


def prepare(root: Path, case: Case, seed: int) -> bool:
    """Put the case's fault into the copy at ``root``; True when the replay must run bound by permission bits."""
    rng = rng_for(seed, case)
    if case.target in ("coverage data", "coverage folder"):
        return break_coverage(root, case, rng)
    if case.target == "shard folder":
        break_shard_folder(root, case)
        return False
    if case.target in SHARD_FILES:
        other = shard_dir(root, case.shard or 0, "resB" if case.fault == "other plan" else "resA2") / case.target
        return break_file(shard_dir(root, case.shard or 0) / case.target, case, rng, other)
    _stage, name, other_name = GLOBAL_FILES[case.target]
    return break_file(root / name, case, rng, root / other_name)


# ---------------------------------------------------------------------------------------------
# process faults


@contextlib.contextmanager
def tmpfs(path: Path, size: int) -> Iterator[None]:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


DISK_BYTES: Final = (4096, 8192, 16384, 65536)


def special(root: Path, case: Case) -> tuple[Answer, list[str]]:
    """A process fault: the faulted stage for real, then the replay; problems seen in between."""
    problems: list[str] = []
    if case.target == "run killed":
        done = run_shard(root, case.shard or 0, 3, moment=KILL_MOMENTS[case.fault])
        if done != -9:
            problems.append(f"run was not killed (exit {done})")
        return replay(root, "aggregate"), problems
    if case.target == "aggregate killed":
        killed = ci_shards(root, *AGGREGATE, moment="writing:" + case.fault.removeprefix("writing "))
        if killed.returncode != -9:
            problems.append(f"aggregate was not killed (exit {killed.returncode})")
        half = {k: v for k, v in read_outputs(root).items() if v not in ("", "missing")}
        problems += [f"after the kill, {k} is {v}" for k, v in half.items()]
        return replay(root, "aggregate"), problems
    if case.fault == "ulimit -f":
        return replay(root, "aggregate", fsize=DISK_BYTES[case.variant]), problems
    if case.fault == "tmpfs":
        with tmpfs(root / "out", DISK_BYTES[case.variant]):
            got = replay(root, "aggregate")
        return got, problems
    folder = shard_dir(root, case.shard or 0)  # run's tmpfs: the shard's folder on a 16 KiB disk
    shutil.rmtree(folder)
    with tmpfs(folder, 16384):
        run_shard(root, case.shard or 0, 3)
        got = replay(root, "aggregate")
    return got, problems


# ---------------------------------------------------------------------------------------------
# checking

SUCCESS: Final = {"passed", "empty", "skipped-by-diff"}


def _shards(answer: Answer) -> dict[int, dict[str, Any]]:
    return {s["index"]: s for s in (answer.verdict or {}).get("shards", [])}


def _coverage_states(answer: Answer) -> dict[int, str]:
    shards = ((answer.coverage or {}).get("completeness") or {}).get("shards", [])
    return {s["index"]: s["state"] for s in shards}


def _allowed(expected: frozenset[str], clean: str | None) -> set[str | None]:
    return {clean if e == SAME else e for e in expected}


def hidden_by_verdict(got: Answer, clean: Answer) -> list[str]:
    """Data the verdict hid: tests counted other than they ran, red turned green, a complete figure that is not."""
    found = []
    if got.code == 0 and clean.code != 0:
        found.append("exit 0 where the clean run fails")
    accounting = (got.verdict or {}).get("accounting", {})
    # tests the verdict names as run but not planned (or run twice) are reported, not hidden, when it fails
    excused = got.code != 0 and bool(accounting.get("unplanned") or accounting.get("duplicated"))
    ours, theirs = _shards(got), _shards(clean)
    for index, shard in ours.items():
        was = theirs.get(index, {})
        other_counts = (shard["tests"], shard["failed"]) != (was.get("tests"), was.get("failed"))
        if not excused and shard["status"] in SUCCESS and other_counts:
            found.append(f"shard {index} is {shard['status']} with {shard['tests']} tests, {was.get('tests')} ran")
    tests, clean_tests = (got.verdict or {}).get("totals", {}).get("tests", 0), clean.verdict["totals"]["tests"]  # type: ignore[index]
    if tests > clean_tests and not excused:
        found.append(f"{tests} tests counted, {clean_tests} ran")
    cov = got.coverage or {}
    if cov.get("state") == "complete" and cov.get("totals") != (clean.coverage or {}).get("totals"):
        found.append(f"coverage complete with {cov.get('totals')}, the clean fold has {clean.coverage['totals']}")  # type: ignore[index]
    return found


def hidden_by_plan(case: Case, got: Answer, clean: Answer) -> list[str]:
    if got.code != 0 or got.items is None or clean.items is None:
        return []
    if case.stage == "select-coverage":
        fewer = sorted(set(clean.items) - set(got.items))
        return [f"the selection skips {len(fewer)} tests the clean map runs: {fewer[:3]}"] if fewer else []
    return [] if got.items == clean.items else ["the plan's items differ from the clean plan's"]


def check(case: Case, got: Answer, clean: Answer) -> Result:
    exp = EXPECT[(case.target, case.fault)]
    result = Result(case, got.code, traceback="Traceback" in got.stderr)
    problems = result.problems
    if got.code not in exp.exit:
        problems.append(f"exit {got.code}, expected {sorted(exp.exit)}: {last_line(got.stderr)}")
    if got.code == 2 and exp.names and not any(exp.names in line for line in got.stderr.splitlines()):
        problems.append(f"exit 2 without a line naming {exp.names}: {last_line(got.stderr)}")
    if case.stage in PLAN_WITH:
        hidden = hidden_by_plan(case, got, clean)
    elif got.code in (0, 1) and got.verdict is not None:
        hidden = hidden_by_verdict(got, clean)
        problems += verdict_problems(case, exp, got, clean)
    elif got.code in (0, 1):  # e.g. the replay never started: exit 1 must not pass for a verdict
        hidden = []
        problems.append(f"exit {got.code} without a verdict: {last_line(got.stderr)}")
    else:
        hidden = []
    problems += hidden
    result.hidden = bool(hidden)
    if result.traceback:
        problems.append("a traceback")
    return result


def verdict_problems(case: Case, exp: Expect, got: Answer, clean: Answer) -> list[str]:
    found = []
    indexes = [case.shard] if case.shard else (list(_shards(clean)) if case.fault == "other plan" else [])
    for index in indexes:
        status = _shards(got).get(index, {}).get("status")
        clean_status = _shards(clean).get(index, {}).get("status")
        if ANY not in exp.status and status not in _allowed(exp.status, clean_status):
            found.append(f"shard {index} is {status}, expected {sorted(exp.status)}")
        state = _coverage_states(got).get(index)
        if ANY not in exp.coverage and state not in _allowed(exp.coverage, _coverage_states(clean).get(index)):
            found.append(f"shard {index}'s coverage is {state}, expected {sorted(exp.coverage)}")
        if exp.names and status != clean_status and exp.names not in got.stderr + json.dumps(got.coverage or {}):
            found.append(f"shard {index} is {status}, and nothing names {exp.names}")
    missing = {k: v for k, v in got.outputs.items() if v}
    if missing and case.target != "disk full":
        found.append(f"verdict reached but outputs not written: {missing}")
    return found


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


# ---------------------------------------------------------------------------------------------
# the campaign


def run_case(case: Case, base: Path, work: Path, seed: int, clean: Mapping[str, Answer]) -> Result:
    root = work / "cases" / case.name
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(base, root, symlinks=True)
    started = time.monotonic()
    try:
        if case.stage == "special":
            got, seen = special(root, case)
        else:
            bound = prepare(root, case, seed)
            got, seen = replay(root, case.stage, bound=bound), []
        result = check(case, got, clean[case.stage if case.stage in PLAN_WITH else "aggregate"])
        result.problems[:0] = seen
    except Exception as err:  # the campaign's own fault: counted, never hidden
        result = Result(case, -1, [f"campaign error: {type(err).__name__}: {err}"])
    result.seconds = time.monotonic() - started
    _remove(root)
    mark = "ok" if not result.problems else "✗ " + "; ".join(result.problems)
    print(f"{case.name}: exit {result.code} in {result.seconds:.1f} s: {mark}", file=sys.stderr, flush=True)
    return result


def _remove(root: Path) -> None:
    subprocess.run(["chmod", "-R", "u+rwX", str(root)], check=False, capture_output=True)
    shutil.rmtree(root, ignore_errors=True)


def clean_answers(base: Path, work: Path, stages: Sequence[str] = tuple(PLAN_WITH)) -> dict[str, Answer]:
    """The clean replay of the aggregate and of each plan stage in ``stages``, checked."""
    answers = {}
    for stage in ("aggregate", *stages):
        root = work / "cases" / f"clean-{stage}"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(base, root, symlinks=True)
        answers[stage] = replay(root, stage)
        _remove(root)
    assert answers["aggregate"].code == 1 and answers["aggregate"].verdict, answers["aggregate"].stderr
    assert all(v == "" for v in answers["aggregate"].outputs.values()), answers["aggregate"].outputs
    assert answers["aggregate"].coverage and answers["aggregate"].coverage["state"] == "complete"
    for stage in stages:
        assert answers[stage].code == 0 and answers[stage].items, answers[stage].stderr
    return answers


def table(results: Sequence[Result], *, special_rows: bool) -> list[str]:
    rows = list(dict.fromkeys(r.case.target for r in results if (r.case.stage == "special") == special_rows))
    faults = list(dict.fromkeys(r.case.fault for r in results if r.case.target in rows))
    head = ["file" if not special_rows else "process fault", *faults, "cases", "as expected", "hid data", "tracebacks"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for target in rows:
        mine = [r for r in results if r.case.target == target]
        cells = []
        for fault in faults:
            some = [r for r in mine if r.case.fault == fault]
            bad = sum(bool(r.problems) for r in some)
            cells.append(f"{len(some)}" + (f" ({bad} ✗)" if bad else "") if some else "")
        ok = sum(not r.problems for r in mine)
        hid, tb = sum(r.hidden for r in mine), sum(r.traceback for r in mine)
        lines.append(f"| {target} | " + " | ".join(cells) + f" | {len(mine)} | {ok} | {hid} | {tb} |")
    return lines


def machine() -> str:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"`{' '.join(platform.uname())}`, nproc {os.cpu_count()}, Python {platform.python_version()}, load {load}"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/ci-shards-faults"), help="scratch folder")
    parser.add_argument("--seed", type=int, default=20, help="the random positions' seed (default: 20)")
    parser.add_argument("--random", type=int, default=3, help="random positions per truncation/flip (default: 3)")
    parser.add_argument("--jobs", type=int, default=2, help="cases at once (default: 2)")
    parser.add_argument("--only", default="", help="only the cases whose name contains this")
    parser.add_argument("--json-out", type=Path, help="every case's result as JSON")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("faults.py: the perm 000, tmpfs and nobody cases need root (setpriv, mount)", file=sys.stderr)
        return 2
    args.work.mkdir(parents=True, exist_ok=True)
    started, cpu0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = machine()
    cases = [c for c in all_cases(args.random) if args.only in c.name]
    base = build_flow(args.work, other_runs=any(needs_other_runs(c) for c in cases))
    clean = clean_answers(base, args.work, [stage for stage in PLAN_WITH if any(c.stage == stage for c in cases)])
    setup = time.monotonic() - started
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda c: run_case(c, base, args.work, args.seed, clean), cases))
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    wall = time.monotonic() - started
    print(f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} before: {load_before}; after: {machine()}")
    print(f"`{' '.join(['python', 'benchmarks/faults.py', *(argv or sys.argv[1:])])}`: {len(results)} cases, "
          f"seed {args.seed}, {wall:.0f} s wall ({setup:.0f} s the clean flow), {cpu:.0f} s CPU\n")  # fmt: skip
    print("\n".join(table(results, special_rows=False)) + "\n")
    print("\n".join(table(results, special_rows=True)) + "\n")
    for result in results:
        if result.problems:
            print(f"- {result.case.name} (exit {result.code}): " + "; ".join(result.problems))
    if args.json_out:
        args.json_out.write_text(json.dumps([{"case": r.case.name, "exit": r.code, "problems": r.problems,
                                              "hidden": r.hidden, "traceback": r.traceback,
                                              "seconds": round(r.seconds, 2)} for r in results], indent=1))  # fmt: skip
    return 1 if any(r.problems for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
