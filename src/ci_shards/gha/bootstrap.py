"""The action's first steps, before ci-shards is installed: refuse what cannot work, key the venv cache, install.

Run as a script by setup-python's interpreter (``python "$GITHUB_ACTION_PATH/src/ci_shards/gha/bootstrap.py" STEP``),
so it imports nothing beyond the standard library and ``ci_shards.gha.inputs`` (itself standard library only).
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a file: the package's source folder is two levels up
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ci_shards.common.errors import EXIT_USAGE, CiShardsError
from ci_shards.gha.inputs import INPUTS_ENV, is_true, parse_inputs

COMMANDS = ("plan", "run", "aggregate", "comment")
PIP = ("-m", "pip", "install", "--quiet", "--disable-pip-version-check")


def refusal(inputs: Mapping[str, str], runner_os: str) -> str | None:
    """Why this job cannot work, in one line, or None."""
    command = inputs.get("command", "")
    if command not in COMMANDS:
        shown = " ".join(command.split())
        return f"input 'command' must be plan, run, aggregate or comment (got: '{shown}')"
    # a discovering plan reads files and timings only: it needs neither pytest nor the project's Python
    discovering = command == "plan" and is_true(inputs, "discover", default=True)
    if is_true(inputs, "pytest") and not inputs.get("python") and not discovering:
        return (
            "pytest: true needs the input python (the interpreter that has pytest and your test dependencies, "
            "e.g. python after setup-python)"
        )
    if runner_os == "Windows":
        return "Windows runners are not supported yet; run the shards on ubuntu or macos"
    return None


def sources_digest(action_path: Path) -> str:
    """What the install depends on: pyproject.toml and the package's sources (a venv is rebuilt when they change)."""
    files = [action_path / "pyproject.toml"] + [
        p for p in (action_path / "src").rglob("*") if p.is_file() and p.suffix in {".py", ".j2", ".toml"}
    ]
    digest = hashlib.sha256()
    for path in sorted(files, key=lambda p: p.relative_to(action_path).as_posix()):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def install_key(env: Mapping[str, str], *, python: str, python_version: str, coverage: bool, sources: str) -> str:
    """A venv only works at the path and with the Python it was made with: both are in the key."""
    where = f"{python}\n{python_version}\n{env.get('RUNNER_TEMP', '')}-coverage-{str(coverage).lower()}"
    digest = hashlib.sha256(where.encode()).hexdigest()[:16]
    return f"ci-shards-venv-{env.get('RUNNER_OS', '')}-{env.get('RUNNER_ARCH', '')}-{digest}-{sources}"


def wrapper_script(python: str) -> str:
    """One entry point for the steps below whichever interpreter ci-shards went into."""
    quoted = python.replace("'", "'\\''")
    return f"#!/bin/sh\nexec '{quoted}' -m ci_shards \"$@\"\n"


def prepare(env: Mapping[str, str]) -> dict[str, str]:
    inputs = parse_inputs(env.get(INPUTS_ENV, ""))
    problem = refusal(inputs, env.get("RUNNER_OS", ""))
    if problem:
        raise CiShardsError(problem)
    if inputs.get("python"):
        return {}
    sources = sources_digest(Path(env["GITHUB_ACTION_PATH"]))
    key = install_key(
        env,
        python=sys.executable,
        python_version=platform.python_version(),
        coverage=is_true(inputs, "coverage"),
        sources=sources,
    )
    return {"key": key, "venv": str(Path(env["RUNNER_TEMP"]) / "ci-shards-venv")}


def install(env: Mapping[str, str]) -> dict[str, str]:
    inputs = parse_inputs(env.get(INPUTS_ENV, ""))
    action = env["GITHUB_ACTION_PATH"]
    coverage = is_true(inputs, "coverage")
    spec = f"{action}[coverage]" if coverage else action
    check = ["-c", "import ci_shards, coverage"] if coverage else ["-m", "ci_shards", "--version"]
    if inputs.get("python"):
        found = shutil.which(inputs["python"])
        if found is None:
            msg = f"input python: '{inputs['python']}' not found"
            raise CiShardsError(msg)
        python = found
        subprocess.run([python, *PIP, spec], check=True)
    else:
        venv = Path(env["RUNNER_TEMP"]) / "ci-shards-venv"
        python = str(venv / "bin" / "python")
        probe = [python, *check]
        usable = Path(python).is_file() and not subprocess.run(probe, capture_output=True, check=False).returncode
        if not usable:  # no venv restored, or one that lacks ci-shards (or coverage)
            _fresh_venv(venv, python, spec)
    bin_dir = Path(env["RUNNER_TEMP"]) / "ci-shards-bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    wrapper = bin_dir / "ci-shards"
    wrapper.write_text(wrapper_script(python))
    wrapper.chmod(0o755)
    subprocess.run([str(wrapper), "--version"], check=True)
    return {"ci-shards": str(wrapper), "python": python}


def _fresh_venv(venv: Path, python: str, spec: str) -> None:
    """No pip inside the venv (ensurepip costs seconds): this interpreter's pip installs into it (pip >= 22.3
    --python); an older pip falls back to a venv with its own."""
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    if subprocess.run([sys.executable, "-m", "pip", "--python", python, *PIP[2:], spec], check=False).returncode:
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([python, *PIP, spec], check=True)


def _append_outputs(env: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    # single-line values only (paths, a key): the plain name=value form
    if outputs and env.get("GITHUB_OUTPUT"):
        with Path(env["GITHUB_OUTPUT"]).open("a", encoding="utf-8") as handle:
            handle.writelines(f"{name}={value}\n" for name, value in outputs.items())


def main(argv: Sequence[str], env: Mapping[str, str]) -> int:
    steps = {"prepare": prepare, "install": install}
    if len(argv) != 1 or argv[0] not in steps:
        print(f"::error title=ci-shards::bootstrap: give one of {', '.join(steps)}", file=sys.stderr)
        return EXIT_USAGE
    try:
        _append_outputs(env, steps[argv[0]](env))
    except CiShardsError as err:
        print(f"::error title=ci-shards::{err}")
        return err.exit_code
    except subprocess.CalledProcessError as err:
        command = " ".join(map(str, err.cmd))
        print(f"::error title=ci-shards::installing ci-shards failed: {command} exited {err.returncode}")
        return EXIT_USAGE
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:], os.environ))
