"""Which Python runs pytest for ``--pytest`` (plan's collection and each shard), and how it finds the plugin.

ci-shards may live in a venv of its own (the README's first command) or under pipx while the project's tests
need the project's environment: ``sys.executable -m pytest`` would then test the wrong one (attrs ran with its
optional dependencies missing: 11 skipped, no warning). The interpreter is ``--python`` (or the config key
``python``), else the active virtualenv's (``$VIRTUAL_ENV``, set by ``activate``) when ci-shards runs from
another environment, else ci-shards' own. ``choose_python`` decides (pure); ``probe`` asks the interpreter what
it is and whether it has pytest; ``plugin_env`` lets a foreign interpreter import the bundled plugin.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ci_shards import __version__
from ci_shards.common.errors import UsageError

# prints the environment and version, exits 3 when pytest cannot be imported (find_spec: nothing is imported),
# then whether pytest-xdist is there (``--workers``) and coverage.py (``--coverage``)
_PROBE: Final = (
    "import sys, importlib.util as u; print(sys.prefix); print(sys.version.split()[0]);"
    " print(int(u.find_spec('xdist') is not None)); print(int(u.find_spec('coverage') is not None));"
    " sys.exit(0 if u.find_spec('pytest') else 3)"
)
_NO_PYTEST: Final = 3
OLDEST_PYTHON: Final = (3, 10)  # pyproject.toml's requires-python
# what `run --coverage` needs in the Python the tests run in (pyproject.toml's coverage extra)
COVERAGE_REQUIREMENT: Final = "coverage>=7.10"
PLUGIN_ENTRY_POINT: Final = "ci_shards = ci_shards.pytest_plugin"  # pyproject.toml's [project.entry-points.pytest11]


@dataclass(frozen=True)
class Interpreter:
    """A Python that runs pytest: its path as given, its ``sys.prefix`` and version."""

    path: str
    prefix: str
    version: str
    has_xdist: bool = False  # pytest-xdist importable (run --workers K > 1 needs it)
    has_coverage: bool = False  # coverage.py importable (run --coverage measures the tests in this Python)

    @property
    def is_ours(self) -> bool:
        """The environment ci-shards runs in (the plugin is importable there as it is here)."""
        return os.path.realpath(self.prefix) == os.path.realpath(sys.prefix)

    def describe(self) -> str:
        return f"python {self.path} ({self.version})"


def choose_python(given: str | None, env: Mapping[str, str], *, running: str, prefix: str) -> str:
    """``given`` (flag or config), else ``$VIRTUAL_ENV``'s interpreter when that venv is not the one ci-shards
    runs from (``prefix``), else ``running`` (ci-shards' own)."""
    if given:
        return given
    venv = env.get("VIRTUAL_ENV", "")
    if venv and os.path.realpath(venv) != os.path.realpath(prefix):
        return str(Path(venv) / "bin" / "python")
    return running


def default_python(given: str | None, env: Mapping[str, str]) -> str:
    return choose_python(given, env, running=sys.executable, prefix=sys.prefix)


def probe(python: str, env: Mapping[str, str]) -> Interpreter:
    """Start ``python`` once; ``UsageError`` (exit 2, one line) when it cannot start or has no pytest."""
    try:
        done = subprocess.run(
            [python, "-c", _PROBE], env=dict(env), capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        msg = f"--python {python}: cannot run it ({reason})"
        raise UsageError(msg) from None
    lines = done.stdout.splitlines()
    if done.returncode == _NO_PYTEST and len(lines) >= 2:
        msg = (
            f"--python {python} (Python {lines[1]}, {lines[0]}) has no pytest: install pytest into that"
            " environment, or give --python the interpreter of the environment your tests run in"
        )
        raise UsageError(msg)
    if done.returncode or len(lines) < 2:
        said = (done.stderr.strip().splitlines() or ["no output"])[-1]
        msg = f"--python {python}: not a working Python (exit {done.returncode}: {said})"
        raise UsageError(msg)
    if _release(lines[1]) < OLDEST_PYTHON:
        # the plugin runs in it (a foreign one imports it from this ci-shards): it would fail to import in each shard
        msg = (
            f"--python {python} is Python {lines[1]}: ci-shards' pytest plugin needs Python"
            f" {'.'.join(map(str, OLDEST_PYTHON))} or newer"
        )
        raise UsageError(msg)
    return Interpreter(
        path=python, prefix=lines[0], version=lines[1], has_xdist=lines[2:3] == ["1"], has_coverage=lines[3:4] == ["1"]
    )


def _release(version: str) -> tuple[int, ...]:
    """``3.9.18`` → (3, 9); a version it cannot read counts as new (the probe printed sys.version's first word)."""
    parts = version.split(".")[:2]
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) and len(parts) == 2 else (99,)


def plugin_env(interpreter: Interpreter, env: Mapping[str, str], shim: Path) -> dict[str, str]:
    """``env`` for ``interpreter -m pytest -p ci_shards``: another environment gets ``shim`` (a folder holding
    only a link to this ci_shards package) first on PYTHONPATH, so the plugin is this version's and nothing
    else of ci-shards' environment (its pytest, its dependencies) leaks into the tests'. The plugin needs
    only the standard library and pytest."""
    if interpreter.is_ours:
        return dict(env)
    shim.mkdir(parents=True, exist_ok=True)
    link = shim / "ci_shards"
    if not link.exists():
        link.symlink_to(Path(__file__).resolve().parents[1], target_is_directory=True)  # common/'s parent
    _plugin_entry_point(shim)
    before = env.get("PYTHONPATH", "")
    return {**env, "PYTHONPATH": os.pathsep.join(p for p in (str(shim), before) if p)}


def _plugin_entry_point(shim: Path) -> None:
    """``shim`` made a distribution that declares the plugin (``[pytest11] ci_shards``), as an installed ci-shards
    does: ``-p ci_shards`` names that entry point, and in an environment without ci-shards pytest would otherwise
    import the bare ``ci_shards`` package, which holds no hook ("unrecognized arguments: --ci-shards-..."). On
    PYTHONPATH, it comes before an older ci-shards the environment may hold, so this version's plugin loads."""
    info = shim / f"ci_shards-{__version__}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: ci-shards\nVersion: {__version__}\n")
    (info / "entry_points.txt").write_text(f"[pytest11]\n{PLUGIN_ENTRY_POINT}\n")
