"""The action's first steps, before ci-shards is installed: refuse what cannot work, key the venv cache, install.

Run as a script by setup-python's interpreter (``python "$GITHUB_ACTION_PATH/src/ci_shards/gha/bootstrap.py" STEP``),
so it imports nothing beyond the standard library and ci-shards' modules that are standard library only
(``gha.inputs``, ``common.errors``, ``common.interpreter``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a file: the package's source folder is two levels up
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ci_shards.common.errors import EXIT_USAGE, CiShardsError
from ci_shards.common.interpreter import COVERAGE_REQUIREMENT
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
    """What the install depends on: pyproject.toml, the package's sources and templates/ (a venv is rebuilt when
    they change)."""
    files = [action_path / "pyproject.toml"] + [
        p
        for folder in ("src", "templates")
        for p in (action_path / folder).rglob("*")
        if p.is_file() and p.suffix in {".py", ".j2", ".toml"}
    ]
    digest = hashlib.sha256()
    for path in sorted(files, key=lambda p: p.relative_to(action_path).as_posix()):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def interpreter_digest(*, python: str, python_version: str, coverage: bool) -> str:
    """What a venv is made of beyond the sources: the Python it was made with, and the coverage extra."""
    return hashlib.sha256(f"{python}\n{python_version}\ncoverage-{str(coverage).lower()}".encode()).hexdigest()[:16]


def install_key(env: Mapping[str, str], *, venv: str, interpreter: str, sources: str) -> str:
    """A venv only works at the path and with the Python it was made with: both are in the key."""
    digest = hashlib.sha256(f"{venv}\n{interpreter}".encode()).hexdigest()[:16]
    return f"ci-shards-venv-{env.get('RUNNER_OS', '')}-{env.get('RUNNER_ARCH', '')}-{digest}-{sources}"


def tool_folder(env: Mapping[str, str], sources: str) -> Path | None:
    """Where this runner keeps ci-shards between jobs: ``$RUNNER_TOOL_CACHE/ci-shards/<sources digest>``.

    The runner's tool cache is the folder setup-python keeps its Pythons in (docs.github.com, "Setting up the tool
    cache on self-hosted runners"): a self-hosted runner keeps it from job to job, a hosted one starts each job with
    its preinstalled tools only. One folder per digest of the action's sources (``sources_digest``), so an action
    whose sources changed never reuses what an older one installed; None when the runner has no tool cache."""
    cache = env.get("RUNNER_TOOL_CACHE", "")
    return Path(cache) / "ci-shards" / sources if cache else None


def venv_folder(env: Mapping[str, str], sources: str, interpreter: str) -> Path:
    """The private venv: in the tool folder, one per interpreter digest; without a tool cache, under $RUNNER_TEMP."""
    tools = tool_folder(env, sources)
    return tools / f"venv-{interpreter}" if tools else Path(env["RUNNER_TEMP"]) / "ci-shards-venv"


def wrapper_script(python: str) -> str:
    """One entry point for the steps below whichever interpreter ci-shards went into."""
    quoted = python.replace("'", "'\\''")
    return f"#!/bin/sh\nexec '{quoted}' -m ci_shards \"$@\"\n"


# Written into a venv after its install succeeded: a venv without it is rebuilt (a job killed mid-install).
COMPLETE = "ci-shards-complete"


def base_interpreter() -> str:
    """The Python a venv made by this one runs on: this one, or, when this one is itself a venv's (a stand-in
    setup-python's, a job's own venv), the base interpreter that venv was made from (venv.EnvBuilder makes a
    venv on sys._base_executable)."""
    return str(getattr(sys, "_base_executable", "") or sys.executable)


def _private_venv(env: Mapping[str, str], inputs: Mapping[str, str]) -> tuple[Path, str, str]:
    """The venv, its cache key and the sources digest, as prepare outputs them and install uses them."""
    sources = sources_digest(Path(env["GITHUB_ACTION_PATH"]))
    interpreter = interpreter_digest(
        python=base_interpreter(), python_version=platform.python_version(), coverage=is_true(inputs, "coverage")
    )
    venv = venv_folder(env, sources, interpreter)
    return venv, install_key(env, venv=str(venv), interpreter=interpreter, sources=sources), sources


def prepare(env: Mapping[str, str]) -> dict[str, str]:
    """Refuses what cannot work; outputs the venv, its cache key, and ready=true when the venv is already complete
    in this runner's tool cache (the cache restore and save are then skipped)."""
    inputs = parse_inputs(env.get(INPUTS_ENV, ""))
    problem = refusal(inputs, env.get("RUNNER_OS", ""))
    if problem:
        raise CiShardsError(problem)
    venv, key, _sources = _private_venv(env, inputs)
    return {"key": key, "venv": str(venv), "ready": str((venv / COMPLETE).is_file()).lower()}


def install(env: Mapping[str, str]) -> dict[str, str]:
    """ci-shards into its private venv (reused from the tool cache when complete), whatever the input python: that
    interpreter runs the tests (``--python``), reached through the plugin's shim (``common.interpreter.plugin_env``),
    and gets nothing of ci-shards' but coverage.py when a shard measures coverage there."""
    inputs = parse_inputs(env.get(INPUTS_ENV, ""))
    action = Path(env["GITHUB_ACTION_PATH"])
    coverage = is_true(inputs, "coverage")
    tests_python = _tests_python(inputs)
    venv, _key, sources = _private_venv(env, inputs)
    python = str(venv / "bin" / "python")
    venv.parent.mkdir(parents=True, exist_ok=True)
    with _locked(venv.parent / f"{venv.name}.lock"):  # jobs running at once on one machine build it once
        if not _complete(venv, python, coverage):  # none restored or left by an earlier job, or a broken one
            wheel = shared_wheel(env, action, sources)
            _fresh_venv(venv, python, _spec(wheel or action, coverage))
            (venv / COMPLETE).write_text(f"{sources}\n")
    if tests_python and coverage and inputs.get("command") == "run":
        _with_coverage(tests_python)
    bin_dir = Path(env["RUNNER_TEMP"]) / "ci-shards-bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    wrapper = bin_dir / "ci-shards"
    wrapper.write_text(wrapper_script(python))
    wrapper.chmod(0o755)
    subprocess.run([str(wrapper), "--version"], check=True)
    return {"ci-shards": str(wrapper), "python": python}


def _tests_python(inputs: Mapping[str, str]) -> str:
    """The input python found on PATH ("" when not given); not found, the job stops here with one line."""
    if not inputs.get("python"):
        return ""
    found = shutil.which(inputs["python"])
    if found is None:
        msg = f"input python: '{inputs['python']}' not found"
        raise CiShardsError(msg)
    return found


def _with_coverage(python: str) -> None:
    """coverage.py in the tests' Python, which measures them: installed when missing, the one package ci-shards
    adds there (as pytest-cov would); one already there is left as the project pinned it."""
    has = "import importlib.util, sys; sys.exit(importlib.util.find_spec('coverage') is None)"
    if subprocess.run([python, "-c", has], check=False).returncode:
        print(f"ci-shards: installing {COVERAGE_REQUIREMENT} into {python}: coverage: true measures the tests there")
        subprocess.run([python, *PIP, COVERAGE_REQUIREMENT], check=True)


def shared_wheel(env: Mapping[str, str], action: Path, sources: str) -> Path | None:
    """The action built into a wheel once per runner and sources digest, in the tool folder; every later install
    on this runner (a venv of another interpreter or with the coverage extra) installs that wheel instead of building
    the sources again (a build is most of an install: setuptools in an isolated environment, docs/benchmarks.md).
    None without a tool cache: then each install builds from the action's folder."""
    tools = tool_folder(env, sources)
    if tools is None:
        return None
    wheels = tools / "wheel"
    tools.mkdir(parents=True, exist_ok=True)
    with _locked(tools / "wheel.lock"):
        if not any(wheels.glob("*.whl")):
            partial = tools / "wheel.partial"  # renamed into place only when whole
            shutil.rmtree(partial, ignore_errors=True)
            shutil.rmtree(wheels, ignore_errors=True)
            build = [sys.executable, "-m", "pip", "wheel", *PIP[3:], "--no-deps", "--wheel-dir", str(partial)]
            subprocess.run([*build, str(action)], check=True)
            partial.rename(wheels)
    return min(wheels.glob("*.whl"))


def _spec(source: Path, coverage: bool) -> str:
    return f"{source}[coverage]" if coverage else str(source)


def _complete(venv: Path, python: str, coverage: bool) -> bool:
    check = ["-c", "import ci_shards, coverage"] if coverage else ["-m", "ci_shards", "--version"]
    if not (venv / COMPLETE).is_file() or not Path(python).is_file():
        return False
    return not subprocess.run([python, *check], capture_output=True, check=False).returncode


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` for the block (flock: released when the process ends, even killed). fcntl is
    imported here, not at the top: prepare must still refuse Windows, which has none, with its own message."""
    import fcntl  # noqa: PLC0415

    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


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
