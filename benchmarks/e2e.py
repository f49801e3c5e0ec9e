"""End-to-end sharding benchmark on real suites from PyPI (by hand; results in docs/benchmarks.md).

    python benchmarks/e2e.py [--venv /tmp/ci-shards-e2e] [--suites networkx pint pygments numpy]
        [--shards 4] [--repeat 3] [--learn {off,all,overhead}] [--workers K] [--json-out FILE]

``pint-pyargs`` runs ``--pyargs pint`` from a repository root (a folder holding a copy of the package),
planned by ``--pytest`` collection there, with ``--pyargs pint`` also in each shard's arguments.
``pygments`` runs the tests of Pygments' sdist (``tests/``: snippet and example-file tests collected
by its conftests, plus test modules) from the unpacked sdist's root, as a checkout runs them; the
sdist of the Pygments version installed in the venv is fetched with ``pip download``. ``numpy`` runs
numpy's own tests from its wheel as ``numpy.test()`` does (``-m "not slow"``), in a venv of its own
(``VENV-numpy``, with hypothesis, meson and ninja) so hypothesis' pytest plugin loads only there.

Installs the suites (pint with numpy and its test plugins; networkx; Pygments' test dependency
wcag-contrast-ratio), pytest-split and this checkout into a throwaway venv. Per suite, the first
serial run records the durations (pytest-split ``--store-durations``); then every round runs, one
after another and alternating the tools:

- a serial run (the reference: this machine's load drifts);
- ci-shards' plan job as the action runs it — a fresh ``python -m ci_shards matrix --discover``
  process over the files on disk and the durations, importing no test code — then each shard as
  its own ``ci-shards run --pytest`` process (only the shard's own files are collected);
- pytest-split: ``pytest --splits N --group i`` on the same durations (every group collects all).

With ``--learn all``, ci-shards runs as the action does across runs: after each round an aggregate
(timed apart: it is off the critical path) writes what the shards measured (their tests' times,
the fixed and per-test overhead) into a timings store, and the next round's plan job reads it with
``--cached-durations`` before the serial durations. ``--learn overhead`` keeps only the learned
overhead from that store (the items' times stay the serial durations): the overhead's own effect.
Round 1 plans from the durations alone.

Both tools get the same pytest options (``PYTEST_OPTS``), the same durations file, the same N and the
same Python.

With ``--workers K`` (issue 23: a runner's K cores) the serial run happens once (it records the durations
and is the CPU reference), then every round runs, one after another, each shard getting the whole machine as a
K-CPU runner would: ci-shards planned and run with ``--workers K`` (the plan models each shard as K pytest-xdist
workers; ``run --pytest`` starts ``-n K --dist loadfile``), pytest-split's groups with ``-n K`` added by hand
(what its users do; same durations, same N), and ci-shards with ``--workers 1``, interleaved shard by shard
(shard i of each tool in turn, the order of the tools rotated each round: the load of a shared machine drifts).
It reports the critical path of each (plan job + slowest shard, wall and CPU) over pytest-split + xdist's, the
total CPU over the serial run's, and each shard's estimate (``estimated_seconds`` + the plan's shard overhead)
against its wall time (goal: within 15 %). After each round an aggregate (off the critical path) writes what the
shards measured into a timings store per K, which the next round's plan reads (``--cached-durations``), as the
action does: round 1 plans with no learned overhead.

Reports per round, with the load average before and after it, and the medians:
- **critical path**: ci-shards' plan job + its slowest shard, over pytest-split's slowest group
  (pytest-split has no plan job) — target ≤ 0.85; in wall seconds and in CPU seconds (user + sys
  of each process tree: robust to the other load on a shared machine);
- **total CPU**: the sum of the shards' CPU (ci-shards' plan job included) over the serial run's —
  target ≤ 1.0; and its wall version, the sum of the shard walls (+ the plan job) over the serial wall;
- slowest shard / max(serial / N, longest test), per tool.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ["pint", "numpy", "networkx", "pygments", "pytest", "pytest-split", "pytest-benchmark", "pytest-subtests"]
PACKAGES += ["wcag-contrast-ratio"]  # Pygments' tests/contrast
# --rootdir: pytest otherwise derives it from every path-like argument, --durations-path included,
# and node ids (pytest-split's keys) would change with where the durations file lives
PYTEST_OPTS = ["-p", "no:cacheprovider", "--benchmark-skip", "--rootdir=.", "-q"]
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "GITHUB_ACTIONS", "GITHUB_OUTPUT")}


@dataclass(frozen=True)
class Suite:
    name: str
    module: str  # imported to find site-packages
    tests: str  # the test path, relative to site-packages
    # run as ``--pyargs MODULE`` from a repository root (a folder holding a copy of the package, tests
    # inside it, as a checkout is), planned by ``--pytest`` collection, ``--pyargs`` in every command
    pyargs: bool = False
    # the tests ship in the sdist only: run ``tests`` from the root of the installed version's sdist
    sdist: str = ""
    # pytest arguments the suite's own docs run it with (numpy.test() deselects -m slow)
    args: tuple[str, ...] = ()
    # installed, with PACKAGES, in a venv of the suite's own (``VENV-NAME``), so that their pytest
    # plugins (hypothesis) load only in this suite's runs
    packages: tuple[str, ...] = ()

    def where(self, python: Path, site: Path, work: Path) -> tuple[Path, list[str]]:
        """The folder every command runs in and the pytest arguments that select the suite."""
        if self.sdist:
            return _unpacked_sdist(python, self.sdist, work), [self.tests, *self.args]
        if not self.pyargs:
            return site, [self.tests, *self.args]
        repo = work / "repo"
        if not (repo / self.module).is_dir():
            shutil.copytree(site / self.module, repo / self.module, ignore=shutil.ignore_patterns("__pycache__"))
        return repo, ["--pyargs", self.module]


SUITES = {
    s.name: s
    for s in (
        Suite("pint", "pint", "pint/testsuite"),
        Suite("networkx", "networkx", "networkx"),
        Suite("pint-pyargs", "pint", "pint/testsuite", pyargs=True),
        Suite("pygments", "pygments", "tests", sdist="pygments"),
        # numpy's own wheel tests as numpy.test() runs them (label "fast"); meson builds the
        # extension modules some tests compile (f2py's Fortran tests skip without a Fortran compiler)
        Suite("numpy", "numpy", "numpy", args=("-m", "not slow"), packages=("hypothesis", "meson", "ninja")),
    )
}
DEFAULT_SUITES = ["networkx", "pint", "pygments"]


def _unpacked_sdist(python: Path, distribution: str, work: Path) -> Path:
    """The root of the unpacked sdist of the version of ``distribution`` installed in the venv."""
    code = f"import importlib.metadata as m; print(m.version({distribution!r}))"
    version = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    root = work / f"{distribution}-{version}"
    if not root.is_dir():
        download = [str(python), "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*download, f"{distribution}=={version}", "-d", str(work)], check=True)
        with tarfile.open(work / f"{distribution}-{version}.tar.gz") as archive:
            archive.extractall(work, filter="data")
    return root


CPU: list[float] = [0.0]  # CPU seconds (user + sys) of the last sh() call's process tree


def sh(argv: list[str], cwd: Path | None = None, quiet: bool = True) -> float:
    """Wall seconds of one command; its tree's CPU seconds go to CPU[0] (robust to a loaded machine).
    The venv's ``bin`` leads PATH, as in an activated venv (numpy's tests call ``meson``)."""
    env = {**ENV, "PATH": f"{Path(argv[0]).parent}{os.pathsep}{ENV.get('PATH', '')}"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.DEVNULL if quiet else None
    subprocess.run(argv, cwd=cwd, stdout=out, stderr=out, check=False, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[0] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall


def ensure_venv(venv: Path, extra: tuple[str, ...] = ()) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PACKAGES, *extra], check=True)
    installed = _imported_from(python, "ci_shards")
    if installed is None:  # a new venv (PACKAGES hold no ci-shards): this checkout, with its dependencies
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(REPO)], check=True)
    elif installed.resolve() != (REPO / "src").resolve():
        # a venv kept from a run of another checkout (a before/after comparison) measures this one
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(REPO)], check=True)
    return python


def _imported_from(python: Path, module: str) -> Path | None:
    """``site_of``, None when ``python`` cannot import ``module``."""
    try:
        return site_of(python, module)
    except subprocess.CalledProcessError:
        return None


def site_of(python: Path, module: str) -> Path:
    code = f"import {module}, pathlib; print(pathlib.Path({module}.__file__).parent.parent)"
    return Path(subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout.strip())


def one_round(
    python: Path, suite: Suite, *, site: Path, work: Path, shards: int, durations: Path, store: Path | None, learn: str
) -> dict[str, Any]:
    """One alternating round after the serial run: plan job, then shard i of each tool in turn; with
    a ``store`` (``--learn``), the plan job also reads what earlier rounds' aggregates learned, and
    this round's aggregate writes it."""
    plan_path = work / "plan.json"
    cwd, target = suite.where(python, site, work)
    how = ["--pytest"] if suite.pyargs else ["--discover"]  # discovery reads files, --pyargs names a package
    plan_cmd = [str(python), "-m", "ci_shards", "matrix", *how, "--durations", str(durations)]
    if store is not None and store.exists():  # as the action passes its cache-restored store
        plan_cmd += ["--cached-durations", str(store)]
    plan_cmd += ["--shards", str(shards), "--plan-out", str(plan_path), "--", *target]
    plan_wall = sh(plan_cmd, cwd=cwd)
    walls: dict[str, list[float]] = {"ci-shards": [], "pytest-split": []}
    cpus: dict[str, list[float]] = {"ci-shards": [CPU[0]], "pytest-split": []}  # the plan job's CPU counts
    tests = {"ci-shards": 0, "pytest-split": 0}
    statuses = []
    for index in range(1, shards + 1):
        out = work / "out"
        run = [str(python), "-m", "ci_shards", "run", "--plan", str(plan_path), "--shard", f"{index}/{shards}"]
        # with --pyargs the natural thing to type: run drops it and runs the shard's own files
        selection = target if suite.pyargs else list(suite.args)
        walls["ci-shards"].append(sh([*run, "--out", str(out), "--pytest", "--", *selection, *PYTEST_OPTS], cwd=cwd))
        cpus["ci-shards"].append(CPU[0])
        outcome = json.loads((out / f"shard-{index}-of-{shards}" / "outcome.json").read_text())
        tests["ci-shards"] += outcome["executed_tests"] + outcome["skipped"]
        statuses.append(outcome["status"])
        junit = work / f"split-{index}.xml"
        split = [str(python), "-m", "pytest", *target, *PYTEST_OPTS, "--splits", str(shards), "--group"]
        split += [str(index), "--durations-path", str(durations), f"--junitxml={junit}"]
        walls["pytest-split"].append(sh(split, cwd=cwd))
        cpus["pytest-split"].append(CPU[0])
        tests["pytest-split"] += junit.read_text().count("<testcase ")
    notes = json.loads(plan_path.read_text())["notes"]
    result = {"plan_wall": plan_wall, "walls": walls, "cpus": cpus, "tests": tests, "statuses": statuses}
    if store is not None:  # the aggregate job: after the shards, off the critical path, reported apart
        aggregate = [str(python), "-m", "ci_shards", "aggregate", "--plan", str(plan_path), str(work / "out")]
        wall = sh([*aggregate, "--timings-out", str(store)], cwd=cwd)
        result |= {"aggregate_wall": wall, "aggregate_cpu": CPU[0]}
        if learn == "overhead":  # keep what aggregate learned about overhead, plan items from the durations
            learned = json.loads(store.read_text())
            store.write_text(json.dumps({**learned, "variants": {}}), encoding="utf-8")
    return result | {"plan_notes": [n for n in notes if "overhead" in n]}


def _plan_job(
    python: Path, how: list[str], target: list[str], where: tuple[Path, Path], durations: Path, *, k: int, shards: int
) -> dict[str, Any]:
    """ci-shards' plan job for K workers, reading what earlier rounds' aggregates learned (as the action);
    ``where``: the folder it runs in and the folder its files go to."""
    cwd, work = where
    plan_path = work / f"plan-w{k}.json"
    plan_cmd = [str(python), "-m", "ci_shards", "matrix", *how, "--durations", str(durations), "--workers", str(k)]
    store = work / f"store-w{k}.json"  # the learned overhead and per-worker start-up per K, as the action caches it
    if store.exists():
        plan_cmd += ["--cached-durations", str(store)]
    plan_wall = sh([*plan_cmd, "--shards", str(shards), "--plan-out", str(plan_path), "--", *target], cwd=cwd)
    return {"plan_path": plan_path, "store": store, "plan_wall": plan_wall, "plan_cpu": CPU[0]}


def workers_round(
    python: Path, suite: Suite, *, site: Path, work: Path, shards: int, durations: Path, workers: int, turn: int = 0
) -> dict[str, Any]:
    """One ``--workers`` round: ci-shards with K workers, pytest-split with ``-n K``, ci-shards with one, shard
    by shard interleaved (shard i of each tool in turn, the order rotated by ``turn``: the load drifts)."""
    cwd, target = suite.where(python, site, work)
    how = ["--pytest"] if suite.pyargs else ["--discover"]
    split_label = f"pytest-split -n{workers}"
    ks = {f"ci-shards -w{workers}": workers, "ci-shards -w1": 1}
    jobs = {
        label: _plan_job(python, how, target, (cwd, work), durations, k=k, shards=shards) for label, k in ks.items()
    }
    plans = {label: json.loads(job["plan_path"].read_text()) for label, job in jobs.items()}
    result: dict[str, Any] = {
        label: {"walls": [], "cpus": [], "estimates": [], "tests": 0} for label in [*ks, split_label]
    }
    order = [*ks, split_label]
    order = order[turn % len(order) :] + order[: turn % len(order)]
    for index in range(1, shards + 1):
        for label in order:
            entry = result[label]
            if label == split_label:
                junit = work / f"split-{index}.xml"
                split = [
                    str(python),
                    "-m",
                    "pytest",
                    *target,
                    *PYTEST_OPTS,
                    "-n",
                    str(workers),
                    "--splits",
                    str(shards),
                ]
                split += ["--group", str(index), "--durations-path", str(durations), f"--junitxml={junit}"]
                entry["walls"].append(sh(split, cwd=cwd))
                entry["cpus"].append(CPU[0])
                entry["tests"] += junit.read_text().count("<testcase ")
                continue
            out = work / f"out-w{ks[label]}"
            run = [str(python), "-m", "ci_shards", "run", "--plan", str(jobs[label]["plan_path"])]
            run += ["--shard", f"{index}/{shards}", "--out", str(out), "--pytest", "--", *target, *PYTEST_OPTS]
            entry["walls"].append(sh(run, cwd=cwd))
            entry["cpus"].append(CPU[0])
            outcome = json.loads((out / f"shard-{index}-of-{shards}" / "outcome.json").read_text())
            entry["tests"] += outcome["executed_tests"] + outcome["skipped"]
            overhead = plans[label].get("shard_overhead_seconds", 0.0)
            entry["estimates"].append(plans[label]["shards"][index - 1]["estimated_seconds"] + overhead)
    for label, k in ks.items():  # the aggregate job, off the critical path: next round's plan learns from it
        aggregate = [str(python), "-m", "ci_shards", "aggregate", "--plan", str(jobs[label]["plan_path"])]
        sh([*aggregate, str(work / f"out-w{k}"), "--timings-out", str(jobs[label]["store"])], cwd=cwd)
        if not jobs[label]["store"].exists():  # else the next round would plan as if nothing had been learned
            sys.exit(f"e2e.py: the aggregate of {label} wrote no timings store: {' '.join(aggregate)}")
        result[label] |= {"plan_wall": jobs[label]["plan_wall"], "plan_cpu": jobs[label]["plan_cpu"]}
    result[split_label] |= {"plan_wall": 0.0, "plan_cpu": 0.0}
    return result


def _workers_ratios(r: dict[str, Any], workers: int) -> dict[str, float]:
    """Critical path (wall, CPU) over pytest-split + xdist's, total CPU over serial, estimate errors."""
    split = r[f"pytest-split -n{workers}"]
    ratios: dict[str, float] = {}
    for label in (f"ci-shards -w{workers}", "ci-shards -w1"):
        tool = r[label]
        ratios[f"{label} critical"] = (tool["plan_wall"] + max(tool["walls"])) / max(split["walls"])
        ratios[f"{label} critical_cpu"] = (tool["plan_cpu"] + max(tool["cpus"])) / max(split["cpus"])
        ratios[f"{label} cpu_over_serial"] = (tool["plan_cpu"] + sum(tool["cpus"])) / r["serial_cpu"]
        ratios[f"{label} worst_estimate_error"] = max(
            abs(e - w) / w for e, w in zip(tool["estimates"], tool["walls"], strict=True) if w > 0
        )
    ratios["pytest-split cpu_over_serial"] = sum(split["cpus"]) / r["serial_cpu"]
    return ratios


def run_workers_suite(
    python: Path, suite: Suite, work_root: Path, *, shards: int, repeat: int, workers: int
) -> dict[str, Any]:
    site = site_of(python, suite.module)
    work = work_root / f"{suite.name}-workers"
    work.mkdir(parents=True, exist_ok=True)
    durations = work / "durations.json"
    durations.unlink(missing_ok=True)
    for k in {1, workers}:  # round 1 plans from this run's durations alone, never from an earlier run's learning
        (work / f"store-w{k}.json").unlink(missing_ok=True)
    cwd, target = suite.where(python, site, work)
    rounds = []
    record = ["--store-durations", "--durations-path", str(durations)]
    serial = sh([str(python), "-m", "pytest", *target, *PYTEST_OPTS, *record], cwd=cwd)  # once: the durations
    serial_cpu = CPU[0]
    for round_no in range(repeat):
        load_before = _load()
        measured = workers_round(
            python, suite, site=site, work=work, shards=shards, durations=durations, workers=workers, turn=round_no
        )
        rounds.append({"serial": serial, "serial_cpu": serial_cpu, **measured, "load": [load_before, _load()]})
        print(f"{suite.name} round {round_no + 1}: {json.dumps(rounds[-1])}", file=sys.stderr)
    per_round = [_workers_ratios(r, workers) for r in rounds]
    times = json.loads(durations.read_text())
    rounded = json.loads(json.dumps(rounds), parse_float=lambda x: round(float(x), 2))
    return {
        "suite": f"{suite.name} from PyPI, {len(times)} tests, longest test {max(times.values()):.2f} s",
        "rounds": rounded,
        "per_round": {k: [round(x[k], 3) for x in per_round] for k in per_round[0]},
        "median": {k: round(statistics.median(x[k] for x in per_round), 3) for k in per_round[0]},
    }


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_suite(python: Path, suite: Suite, work_root: Path, *, shards: int, repeat: int, learn: str) -> dict[str, Any]:
    site = site_of(python, suite.module)
    work = work_root / suite.name
    work.mkdir(parents=True, exist_ok=True)
    durations = work / "durations.json"
    durations.unlink(missing_ok=True)
    store = work / "store.json" if learn != "off" else None
    if store is not None:
        store.unlink(missing_ok=True)
    cwd, target = suite.where(python, site, work)
    serial_cmd = [str(python), "-m", "pytest", *target, *PYTEST_OPTS]
    rounds = []
    for round_no in range(repeat):
        load_before = _load()
        record = ["--store-durations", "--durations-path", str(durations)] if round_no == 0 else []
        serial = sh([*serial_cmd, *record], cwd=cwd)
        serial_cpu = CPU[0]
        sharded = one_round(
            python, suite, site=site, work=work, shards=shards, durations=durations, store=store, learn=learn
        )
        rounds.append(
            {"serial": serial, "serial_cpu": serial_cpu, **sharded, "load_before": load_before, "load_after": _load()}
        )
        print(
            f"{suite.name} round {round_no + 1}: serial {serial:.1f} s ({serial_cpu:.1f} s CPU), plan"
            f" {rounds[-1]['plan_wall']:.2f} s, shard walls {rounds[-1]['walls']}, CPU {rounds[-1]['cpus']},"
            f" load {load_before} -> {rounds[-1]['load_after']}, {rounds[-1]['plan_notes']}",
            file=sys.stderr,
        )
    times = json.loads(durations.read_text())
    longest = max(times.values())
    per_round = [_ratios(r, shards=shards, longest=longest) for r in rounds]
    return {
        "suite": f"{suite.name} from PyPI, {len(times)} tests, longest test {longest:.2f} s",
        "command_dir": str(cwd),
        "serial_s": [round(r["serial"], 1) for r in rounds],
        "serial_cpu_s": [round(r["serial_cpu"], 1) for r in rounds],
        "plan_job_s": [round(r["plan_wall"], 2) for r in rounds],
        "plan_job_cpu_s": [round(r["cpus"]["ci-shards"][0], 2) for r in rounds],
        "ci_shards_walls_s": [[round(w, 1) for w in r["walls"]["ci-shards"]] for r in rounds],
        "pytest_split_walls_s": [[round(w, 1) for w in r["walls"]["pytest-split"]] for r in rounds],
        "ci_shards_cpus_s": [[round(c, 1) for c in r["cpus"]["ci-shards"][1:]] for r in rounds],
        "pytest_split_cpus_s": [[round(c, 1) for c in r["cpus"]["pytest-split"]] for r in rounds],
        "load_before_after": [[r["load_before"], r["load_after"]] for r in rounds],
        "tests_run": [r["tests"] for r in rounds],
        "ci_shards_statuses": [r["statuses"] for r in rounds],
        "plan_overhead_notes": [r["plan_notes"] for r in rounds],
        "aggregate_s": [round(r["aggregate_wall"], 2) for r in rounds if "aggregate_wall" in r],
        "per_round": {k: [round(x[k], 3) for x in per_round] for k in per_round[0]},
        "median": {k: round(statistics.median(x[k] for x in per_round), 3) for k in per_round[0]},
    }


def _ratios(r: dict[str, Any], *, shards: int, longest: float) -> dict[str, float]:
    """One round's ratios: the two targets, each in wall and in CPU seconds, and the balance."""
    ideal = max(r["serial"] / shards, longest)
    ci_walls, split_walls = r["walls"]["ci-shards"], r["walls"]["pytest-split"]
    plan_cpu, *ci_cpus = r["cpus"]["ci-shards"]
    split_cpus = r["cpus"]["pytest-split"]
    return {
        "critical": (r["plan_wall"] + max(ci_walls)) / max(split_walls),
        "critical_cpu": (plan_cpu + max(ci_cpus)) / max(split_cpus),
        "cpu_ci": (plan_cpu + sum(ci_cpus)) / r["serial_cpu"],
        "cpu_split": sum(split_cpus) / r["serial_cpu"],
        "wall_sum_ci": (r["plan_wall"] + sum(ci_walls)) / r["serial"],
        "wall_sum_split": sum(split_walls) / r["serial"],
        "slow_ci": max(ci_walls) / ideal,
        "slow_split": max(split_walls) / ideal,
    }


def _versions(python: Path, extra: tuple[str, ...] = ()) -> dict[str, str]:
    code = "import importlib.metadata as m, json, sys; print(json.dumps({d: m.version(d) for d in sys.argv[1:]}))"
    names = ["ci-shards", *PACKAGES, *extra]
    return dict(json.loads(subprocess.run([str(python), "-c", code, *names], check=True, capture_output=True).stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=Path("/tmp/ci-shards-e2e"), help="(default: /tmp/ci-shards-e2e)")
    parser.add_argument(
        "--suites", nargs="+", choices=sorted(SUITES), default=DEFAULT_SUITES, help=f"(default: {DEFAULT_SUITES})"
    )
    parser.add_argument("--shards", type=int, default=4, help="(default: 4)")
    parser.add_argument("--repeat", type=int, default=3, help="alternating rounds (default: 3)")
    parser.add_argument("--json-out", type=Path, default=None, help="also write the result here (default: none)")
    parser.add_argument(
        "--learn",
        choices=["off", "all", "overhead"],
        default="off",
        help="all: aggregate each round's ci-shards shards into a timings store that later rounds plan with, as"
        " the action does; overhead: keep only the learned overhead, items from the durations (default: off)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="K: compare ci-shards --workers K with pytest-split + -n K and ci-shards --workers 1 (default: off)",
    )
    args = parser.parse_args()
    python = ensure_venv(args.venv, ("pytest-xdist",) if args.workers else ())
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{' '.join(platform.uname())}, nproc {os.cpu_count()}, Python {platform.python_version()},"
        f" load {os.getloadavg()[0]:.1f} at the start",
        "command": shlex.join(sys.argv),
        "versions": _versions(python),
        "shards": args.shards,
        "repeat": args.repeat,
        "learn": args.learn,
        "workers": args.workers,
    }
    for name in args.suites:
        suite = SUITES[name]
        venv = args.venv.with_name(f"{args.venv.name}-{name}") if suite.packages else args.venv
        suite_python = ensure_venv(venv, (*suite.packages, *(("pytest-xdist",) if args.workers else ())))
        if suite.packages:
            result[f"{name}_versions"] = _versions(suite_python, suite.packages)
        if args.workers:
            result[name] = run_workers_suite(
                suite_python, suite, venv / "bench", shards=args.shards, repeat=args.repeat, workers=args.workers
            )
        else:
            result[name] = run_suite(
                suite_python, suite, venv / "bench", shards=args.shards, repeat=args.repeat, learn=args.learn
            )
        if args.json_out:  # after every suite: a long run interrupted keeps what it measured
            args.json_out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    result["load_at_the_end"] = _load()
    text = json.dumps(result, indent=2)
    if args.json_out:
        args.json_out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
