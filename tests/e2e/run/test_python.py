"""ci-shards in one venv, the project's tests in another: ``--python`` and ``$VIRTUAL_ENV`` pick the project's
interpreter for the collection and every shard (issue 27: ``sys.executable -m pytest`` tested ci-shards' own
environment, attrs ran with its optional dependencies missing, 11 skipped and no warning)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="venv layout"),
]

TESTS = {
    "tests/test_env.py": (
        "import sys\n\nimport projdep\n\n\n"
        "def test_runs_in_the_projects_venv():\n    assert projdep.WHERE == 'project'\n\n\n"
        "def test_prefix_is_the_projects():\n    assert sys.prefix == projdep.PREFIX\n"
    ),
    "tests/test_more.py": "import projdep\n\n\ndef test_dep():\n    assert projdep.WHERE == 'project'\n",
}


# what this pytest imports, each a module or package of this venv's site-packages (some absent on newer Pythons)
PYTEST_ONLY = ("pytest", "_pytest", "py.py", "pluggy", "iniconfig", "packaging", "pygments", "exceptiongroup", "tomli")


def project_venv(where: Path, *, with_pytest: bool, extra: tuple[str, ...] = ()) -> Path:
    """A venv without pip holding ``projdep`` (only there) and, with ``with_pytest``, this pytest through a
    .pth line to a folder linking pytest's own packages and their metadata alone: no ci_shards nor its entry point
    (an environment ci-shards was never installed in: the plugin must come from ci-shards itself)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = Path(
        subprocess.run(
            [str(where / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    (site / "projdep.py").write_text(f"WHERE = 'project'\nPREFIX = {str(where)!r}\n")
    if with_pytest:
        ours, only = Path(sysconfig.get_paths()["purelib"]), where / "pytest-only"
        only.mkdir()
        for name in (
            *PYTEST_ONLY,
            *extra,
        ):  # each with its distribution's metadata, which pytest reads (pluggy's version)
            for found in [ours / name, *ours.glob(f"{name.removesuffix('.py')}-*.dist-info")]:
                if found.exists():
                    (only / found.name).symlink_to(found)
        (site / "borrowed_pytest.pth").write_text(f"{only}\n")
    return where / "bin" / "python"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    for name, text in TESTS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    project_venv(root / "venv", with_pytest=True)
    return root


def _local(project: Path, out: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "ci_shards", "local", "--shards", "2", "--out", out, *args, "--pytest", "--", "tests"]
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, check=False, timeout=300)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "VIRTUAL_ENV", "PYTHONPATH")}
    return {**env, **extra}


@pytest.mark.slow
@pytest.mark.parametrize("way", ["--python", "VIRTUAL_ENV"])
def test_the_projects_interpreter_runs_collection_and_every_shard(project: Path, way: str) -> None:
    python = project / "venv" / "bin" / "python"
    flags = ["--python", str(python)] if way == "--python" else []
    env = _env(VIRTUAL_ENV=str(project / "venv")) if way == "VIRTUAL_ENV" else _env()
    done = _local(project, f"results-{way}", *flags, env=env)
    assert done.returncode == 0, done.stderr
    assert "3 passed" in done.stdout + done.stderr
    out = project / f"results-{way}"
    assert f"  2/2 passed: {out.name}/shard-2-of-2/output.log" in done.stdout  # local names each shard's log
    logs = sorted((project / f"results-{way}").glob("shard-*/console.log"))
    first_lines = [log.read_text().splitlines()[0] for log in logs]
    assert len(first_lines) == 2, done.stderr
    assert all(line.endswith(f", python {python} ({sys.version.split()[0]})") for line in first_lines), first_lines


def test_an_interpreter_without_pytest_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bare = project_venv(tmp_path / "bare", with_pytest=False)
    for name, text in TESTS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    done = _local(tmp_path, "results", "--python", str(bare), env=_env())
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"ci-shards: --python {bare} (Python {sys.version.split()[0]}, {tmp_path / 'bare'}) has no pytest: install"
        " pytest into that environment, or give --python the interpreter of the environment your tests run in"
    ]
    assert not (tmp_path / "results").exists()  # nothing started


@pytest.mark.slow
def test_coverage_in_another_environment_is_measured_there_or_refused_up_front(tmp_path: Path) -> None:
    # coverage.py must be where the tests run: without it there, every shard had failed its tests' start-up
    # ("No module named 'coverage'", 4 errors, coverage partial); now one line before anything runs
    for name, text in TESTS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    without = project_venv(tmp_path / "without", with_pytest=True)
    done = _local(tmp_path, "results", "--python", str(without), "--coverage", env=_env())
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f"ci-shards: --coverage: python {without} ({sys.version.split()[0]}) has no coverage.py: install"
        " coverage>=7.10 into the environment the tests run in"
    )
    assert not (tmp_path / "results").exists()
    with_coverage = project_venv(tmp_path / "with", with_pytest=True, extra=("coverage",))
    done = _local(tmp_path, "results", "--python", str(with_coverage), "--coverage", env=_env())
    assert done.returncode == 0, done.stderr
    assert "coverage complete (2/2 shards)" in done.stdout + done.stderr
