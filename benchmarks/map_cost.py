"""What the coverage map costs: one base run of a real suite under ``ci-shards run --coverage``, folded by
``ci-shards aggregate --coverage-out``, once per ci-shards source tree given (e.g. ``main``'s, one context per
test file, against this branch's, one per test). Per variant: the run's and the fold's wall and CPU seconds
(the child processes'), the raw data's and coverage.json's bytes, and the contexts recorded.

Run by hand (the Python needs the suite's test dependencies and coverage; ``git archive main | tar -x -C
/tmp/main-src`` makes the other tree, after ``mkdir -p /tmp/main-src``):
  .venv/bin/python benchmarks/map_cost.py --sdist semver-3.1.2.tar.gz --python /tmp/venv/bin/python \\
      --work /tmp/mapcost --variant per-file=/tmp/main-src/src --variant per-test=src --pytest-arg=--no-cov
(packaging: ``--exclude tests/property``, files whose tests its configuration deselects.) ``--run-arg
per-file=--coverage-map-per=file`` gives a variant's ``run`` an argument; ``--fold-with new=src`` folds every
variant's shards again with another tree (a row each), and ``--reuse`` keeps the runs of an earlier
``--work`` and only folds (the run columns from its cost.json, when it wrote one).
Prints a Markdown table (with the machine and load) to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path


def measured(name: str, step: list[str], repo: Path, env: dict[str, str], out: Path) -> dict[str, float]:
    """One step's wall and CPU seconds and peak resident memory (``wait4``: this child and its descendants)."""
    wall = time.monotonic()
    with (out / f"{name}.stderr").open("w") as err, (out / f"{name}.stdout").open("w") as std:
        child = subprocess.Popen(step, cwd=repo, env=env, stdout=std, stderr=err)
        _pid, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"{name} failed (exit {child.returncode}): {(out / f'{name}.stderr').read_text()[-2000:]}")
    return {
        f"{name}_wall": time.monotonic() - wall,
        f"{name}_cpu": usage.ru_utime + usage.ru_stime,
        f"{name}_rss_mb": usage.ru_maxrss / 1024,
    }


def base_run(  # noqa: PLR0917
    repo: Path, python: str, src: Path, out: Path, args: argparse.Namespace, run_args: list[str]
) -> dict[str, float]:
    found = (p.relative_to(repo).as_posix() for p in (repo / "tests").rglob("test_*.py"))
    tests = sorted(t for t in found if not t.startswith(tuple(args.exclude)))
    pytest_args = args.pytest_arg
    out.mkdir(parents=True)
    (out / "items.txt").write_text("".join(f"{t}\n" for t in tests), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{repo / 'src'}{os.pathsep}{src.resolve()}"}
    cli, plan = [sys.executable, "-m", "ci_shards"], str(out / "plan.json")
    steps = {
        "plan": [*cli, "plan", "--items", str(out / "items.txt"), "--shards", "1", "-o", plan],
        "run": [*cli, "run", "--plan", plan, "--shard", "1/1", "--coverage", "--out", str(out / "shards"), "--",
                python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args, "--junitxml={junit}", "{items}"],
        "fold": [*cli, "aggregate", "--plan", plan, str(out / "shards"), "--coverage-out", str(out / "cov")],
    }  # fmt: skip
    steps["run"][steps["run"].index("--") : steps["run"].index("--")] = run_args
    cost: dict[str, float] = {}
    for name, step in steps.items():
        cost.update(measured(name, step, repo, env, out))
    (out / "cost.json").write_text(json.dumps(cost), encoding="utf-8")
    return cost | artifact_cost(out, "cov")


def fold_again(repo: Path, src: Path, out: Path, label: str) -> dict[str, float]:
    """The shards of an earlier run (``out``) folded again by the ci-shards tree ``src`` (into ``cov-LABEL``)."""
    env = {**os.environ, "PYTHONPATH": f"{repo / 'src'}{os.pathsep}{src.resolve()}"}
    shutil.rmtree(out / f"cov-{label}", ignore_errors=True)
    step = [sys.executable, "-m", "ci_shards", "aggregate", "--plan", str(out / "plan.json"), str(out / "shards"),
            "--coverage-out", str(out / f"cov-{label}")]  # fmt: skip
    return measured("fold", step, repo, env, out) | artifact_cost(out, f"cov-{label}")


def artifact_cost(out: Path, folder: str) -> dict[str, float]:
    cost: dict[str, float] = {}
    artifact = out / folder / "coverage.json"
    files = json.loads(artifact.read_text(encoding="utf-8"))["files"]
    cost["json_mb"] = artifact.stat().st_size / 1e6
    cost["data_mb"] = sum(f.stat().st_size for f in (out / "shards").rglob("coverage-py*") if f.is_file()) / 1e6
    cost["contexts"] = len(
        json.loads(artifact.read_text(encoding="utf-8")).get("contexts")
        or {t for entry in files.values() for t in entry.get("tests", entry["test_files"])}
    )
    return cost


def row(label: str, c: dict[str, float]) -> str:
    def figure(key: str, unit: str, digits: int = 1) -> str:
        return f"{c[key]:.{digits}f} {unit}" if key in c else "-"

    cells = [figure("run_wall", "s"), figure("run_cpu", "s"), figure("fold_wall", "s"), figure("fold_cpu", "s"),
             figure("fold_rss_mb", "MB", 0), figure("data_mb", "MB", 2), figure("json_mb", "MB", 2),
             figure("contexts", "", 0).strip()]  # fmt: skip
    return f"| {label} | " + " | ".join(cells) + " |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist", required=True, help="the package's sdist (.tar.gz)")
    parser.add_argument("--python", required=True, help="a Python with the suite's test dependencies and coverage")
    parser.add_argument("--work", required=True, help="a scratch folder (replaced)")
    parser.add_argument("--variant", action="append", required=True, help="LABEL=PATH of a ci-shards src/ tree")
    parser.add_argument(
        "--fold-with",
        action="append",
        default=[],
        help="LABEL=PATH: fold every variant's shards again with this ci-shards src/ tree too (a row each)",
    )
    parser.add_argument(
        "--reuse", action="store_true", help="keep --work's runs (their cost.json) and only fold (default: off)"
    )
    parser.add_argument(
        "--run-arg", action="append", default=[],
        help="LABEL=ARG: an argument for that variant's `ci-shards run`, e.g. per-file=--coverage-map-per=file"
    )  # fmt: skip
    parser.add_argument(
        "--pytest-arg",
        action="append",
        default=[],
        help="an argument for pytest, e.g. --pytest-arg=--no-cov for semver's pytest-cov addopts (default: none)",
    )
    parser.add_argument(
        "--exclude", action="append", default=[], help="leave out test files under this prefix, e.g. tests/property"
        " (packaging's opt-in property tests, every one deselected by default; default: none)"
    )  # fmt: skip
    args = parser.parse_args()
    work = Path(args.work)
    if not args.reuse:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        with tarfile.open(args.sdist) as tar:
            tar.extractall(work / "sdist", filter="data")
    (repo,) = list((work / "sdist").iterdir())
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    rows = ["| variant | run wall | run CPU | fold wall | fold CPU | fold peak RSS | raw data | coverage.json"
            " | contexts |", "|---|--:|--:|--:|--:|--:|--:|--:|--:|"]  # fmt: skip
    for variant in args.variant:
        label, _, src = variant.partition("=")
        run_args = [a.partition("=")[2] for a in args.run_arg if a.partition("=")[0] == label]
        if args.reuse:
            saved = work / label / "cost.json"
            c = json.loads(saved.read_text(encoding="utf-8")) if saved.is_file() else {}
            c |= {k: v for k, v in artifact_cost(work / label, "cov").items() if (work / label / "cov").is_dir()}
        else:
            c = base_run(repo, args.python, Path(src), work / label, args, run_args)
        rows.append(row(label, c))
        for fold in args.fold_with:
            name, _, tree = fold.partition("=")
            again = fold_again(repo, Path(tree), work / label, name)
            rows.append(row(f"{label}, folded by {name}", {"data_mb": c.get("data_mb", 0.0), **again}))
    uname = " ".join(platform.uname())
    head = f"`{Path(args.sdist).name}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, `{uname}`, nproc"
    end = " ".join(f"{x:.1f}" for x in os.getloadavg())
    sys.stdout.write(
        f"{head} {os.cpu_count()}, load {load} at the start, {end} at the end)\n\n" + "\n".join(rows) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
