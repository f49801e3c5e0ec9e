"""What ``ci-shards init`` reads of the repository it runs in (the I/O edge): a few files at its root, parsed.

Nothing here decides anything: ``init.detect`` turns these facts into choices. Only the root is read, plus one
walk for the test files of a Node project (jest and ``node --test`` name their files by convention, not in a
settings file) and, in a folder with no project file at all, one for a file pytest collects by its default
names; nothing is imported or run.
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ci_shards.common import json_text, toml_text
from ci_shards.common.errors import InputError, why_unreadable
from ci_shards.plan.discover import settings_in

LOCKFILES: Final = ("package-lock.json", "npm-shrinkwrap.json")  # what `npm ci` installs from
# folders a Node test walk never enters: dependencies, build output, VCS and tool state
SKIPPED_DIRS: Final = frozenset({"node_modules", "dist", "build", "coverage", "vendor", "out"})
NODE_TEST_FILE: Final = re.compile(r"(^|[._-])(test|spec)\.[cm]?[jt]sx?$|^test[._-].*\.[cm]?[jt]sx?$")
MAX_NODE_TEST_FILES: Final = 10_000  # enough to see which folders hold them
# pytest's default python_files (test_*.py, *_test.py) and the folders its default norecursedirs never enters
PYTEST_TEST_FILE: Final = re.compile(r"^test_.*\.py$|^.*_test\.py$")
PYTEST_SKIPPED_DIRS: Final = frozenset({"node_modules", "build", "dist", "venv", "CVS", "_darcs", "{arch}"})
MAX_PYTEST_WALK_DIRS: Final = 2_000  # a folder of tests shows one within its first folders; stop looking after
PYTHON_PROJECT_FILES: Final = ("pyproject.toml", "setup.cfg", "setup.py")
REQUIREMENTS_FILE: Final = re.compile(r"[\w.-]*requirements[\w.-]*\.txt")  # requirements.txt, dev-requirements.txt
# where coverage.py looks for its settings, in its order (coverage/config.py, config_files_to_try): the first two are
# its own files, read whenever present; the others only when they hold a coverage section
COVERAGE_FILES: Final = (".coveragerc", ".coveragerc.toml", "setup.cfg", "tox.ini", "pyproject.toml")


@dataclass(frozen=True, kw_only=True)
class ProjectFacts:
    """The repository as ``init`` found it. Paths are relative to its root, in POSIX form."""

    files: frozenset[str] = frozenset()  # the root's own files (names only)
    pyproject: Mapping[str, Any] = field(default_factory=dict)  # pyproject.toml, parsed ({} when absent)
    setup_cfg_extras: tuple[str, ...] = ()  # [options.extras_require] of setup.cfg
    pytest_source: str = ""  # the file pytest takes its settings from ("" for none)
    testpaths: tuple[str, ...] = ()
    addopts: tuple[str, ...] = ()  # the pytest settings' addopts, as words
    pytest_keys: tuple[str, ...] = ()  # the names of every pytest setting (plugins' too)
    python_version_file: str = ""  # .python-version's first line
    package_json: Mapping[str, Any] = field(default_factory=dict)
    node_test_files: tuple[str, ...] = ()  # jest's / node --test's conventional test files, sorted
    has_go_mod: bool = False
    pytest_test_file: str = ""  # the first file pytest's default names collect, when no project file says more
    repository_root: str = ""  # the git repository's root when it is above this folder ("" when here or none)
    coverage_gate: tuple[str, str] = ("", "")  # (the file, the value) of coverage.py's [report] fail_under when set


def _pyproject(path: Path) -> Mapping[str, Any]:
    if not path.is_file():
        return {}
    try:
        data: Mapping[str, Any] = toml_text.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as err:  # ValueError: TOMLDecodeError, UnicodeDecodeError
        raise InputError(path, f"cannot read it: {why_unreadable(err)}") from None
    return data


def _package_json(path: Path) -> Mapping[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json_text.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise InputError(path, f"cannot read it: {err}") from None
    if not isinstance(data, dict):
        raise InputError(path, "must hold a JSON object")
    return data


def _setup_cfg_extras(path: Path) -> tuple[str, ...]:
    if not path.is_file():
        return ()
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"), source=str(path))
    except (OSError, UnicodeDecodeError, configparser.Error) as err:
        raise InputError(path, f"cannot read it: {err}") from None
    section = "options.extras_require"
    return tuple(sorted(parser[section])) if parser.has_section(section) else ()


def _first_line(path: Path) -> str:
    if not path.is_file():
        return ""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(path, f"cannot read it: {err}") from None
    return next((line.strip() for line in lines if line.strip() and not line.startswith("#")), "")


def _node_test_files(root: Path) -> tuple[str, ...]:
    found: list[str] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        here = Path(directory).relative_to(root)
        in_tests = "__tests__" in here.parts
        for name in sorted(files):
            if NODE_TEST_FILE.search(name) or (in_tests and re.search(r"\.[cm]?[jt]sx?$", name)):
                found.append((here / name).as_posix())
        if len(found) >= MAX_NODE_TEST_FILES:
            break
    return tuple(sorted(found))


def _pytest_test_file(root: Path) -> str:
    """The first file, walking ``root`` in sorted order, that pytest's defaults collect (``test_*.py``,
    ``*_test.py``), in no folder pytest's default ``norecursedirs`` or a virtualenv (``pyvenv.cfg``) keeps it out
    of; "" for none within ``MAX_PYTEST_WALK_DIRS`` folders."""
    for seen, (directory, dirs, files) in enumerate(os.walk(root)):
        if seen >= MAX_PYTEST_WALK_DIRS:
            break
        here = Path(directory)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in PYTEST_SKIPPED_DIRS
            and not d.startswith(".")
            and not d.endswith(".egg")
            and not (here / d / "pyvenv.cfg").exists()
        )
        name = next((n for n in sorted(files) if PYTEST_TEST_FILE.match(n)), None)
        if name is not None:
            return (here.relative_to(root) / name).as_posix()
    return ""


def _has_project_file(files: frozenset[str]) -> bool:
    """Whether the root names its runner or its kind of project without a look at its test files."""
    markers = ("package.json", "go.mod", *PYTHON_PROJECT_FILES, "pytest.ini", "tox.ini")
    return any(m in files for m in markers) or any(REQUIREMENTS_FILE.fullmatch(f) for f in files)


def _repository_root_above(root: Path) -> str:
    """The nearest parent holding ``.git``: CI reads its configuration there, not in this folder."""
    if (root / ".git").exists():
        return ""
    return next((str(parent) for parent in root.parents if (parent / ".git").exists()), "")


def read_facts(root: Path) -> ProjectFacts:
    """The facts of the repository at ``root``; an unreadable settings file is an ``InputError`` naming it."""
    files = frozenset(p.name for p in root.iterdir() if p.is_file())
    settings = settings_in(root)
    package_json = _package_json(root / "package.json")
    return ProjectFacts(
        files=files,
        pyproject=_pyproject(root / "pyproject.toml"),
        setup_cfg_extras=_setup_cfg_extras(root / "setup.cfg"),
        pytest_source=Path(settings.source).name if settings and settings.source else "",
        testpaths=settings.testpaths if settings else (),
        addopts=settings.addopts if settings else (),
        pytest_keys=settings.keys if settings else (),
        python_version_file=_first_line(root / ".python-version"),
        package_json=package_json,
        node_test_files=_node_test_files(root) if package_json else (),
        has_go_mod="go.mod" in files,
        pytest_test_file="" if _has_project_file(files) else _pytest_test_file(root),
        repository_root=_repository_root_above(root),
        coverage_gate=coverage_gate(root),
    )


def coverage_gate(root: Path) -> tuple[str, str]:
    """(file, value) of ``[report] fail_under`` in the settings coverage.py reads at ``root`` (the first of
    ``COVERAGE_FILES`` it takes), which pytest-cov applies when no --cov-fail-under is given; ("", "") when that
    file sets none, or cannot be read: what the shards then meet is named in their reason (run/exit_causes.py)."""
    for name in COVERAGE_FILES:
        path = root / name
        if not path.is_file():
            continue
        own = name.startswith(".coveragerc")
        try:
            text = path.read_text(encoding="utf-8")
            used, report = _toml_report(text, own=own) if name.endswith(".toml") else _ini_report(text, own=own)
        except (OSError, ValueError, RecursionError, configparser.Error):  # ValueError: TOML's, UnicodeDecodeError
            return ("", "")
        if used:
            value = report.get("fail_under")
            return (name, str(value).strip()) if value is not None else ("", "")
    return ("", "")


def _ini_report(text: str, *, own: bool) -> tuple[bool, Mapping[str, Any]]:
    """(whether coverage.py takes this file, its [report] section): its own file is taken whole, with sections
    named plainly or ``coverage:``-prefixed (the prefixed first, as coverage.py's HandyConfigParser tries them)."""
    parser = configparser.RawConfigParser()
    parser.read_string(text)
    used = own or any(section.startswith("coverage:") for section in parser.sections())
    names = ("coverage:report", "report") if own else ("coverage:report",)
    section = next((name for name in names if parser.has_section(name)), None)
    return used, dict(parser[section]) if section else {}


def _toml_report(text: str, *, own: bool) -> tuple[bool, Mapping[str, Any]]:
    """The same for TOML: ``[tool.coverage.report]``, or in coverage.py's own ``.coveragerc.toml`` ``[report]``."""
    data = toml_text.loads(text)
    tool = data.get("tool")
    coverage = tool.get("coverage") if isinstance(tool, dict) else None
    tables = [coverage, data] if own else [coverage]
    empty: Mapping[str, Any] = {}
    report = next((t["report"] for t in tables if isinstance(t, dict) and isinstance(t.get("report"), dict)), empty)
    return own or isinstance(coverage, dict), report
