"""Installed pytest plugins that change which files pytest collects, known without importing them.

pytest loads the ``pytest11`` entry point of every distribution installed for its interpreter, unless
``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is set or ``--disable-plugin-autoload`` is given (then only what ``-p NAME``
loads), and ``-p no:NAME`` blocks one by its entry-point name. A plugin whose ``pytest_collect_file`` collects
files that ``python_files`` does not name makes tests a discovery of ``test_*.py`` files never sees: with no such
file at all, the plan had no item and the run failed before a shard started, where plain pytest ran every test.

One such plugin is known here by its rules, pytest-relaxed (the spec-style suites of invoke, paramiko and
fabric): every ``.py`` file but ``conftest.py`` and ``test_*.py`` (which pytest's own rules collect) is a spec
module, in which every class and function whose name does not start with ``_`` is a test or a test class, nested
classes included; and its ``pytest_ignore_collect`` leaves out every file and folder whose name starts with
``_``, whatever collects it. Whether it is installed is read from the ``entry_points.txt`` of the dist-info (or
egg-info) folders on the shards' interpreter's search path, nothing imported.
"""

from __future__ import annotations

import configparser
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ci_shards.plan.pytest_args import every_value

RELAXED: Final = "pytest_relaxed.plugin"  # pytest-relaxed's plugin module, its pytest11 entry point's value
# a spec module's tests and test classes: every name not starting with "_" (pytest's rule: a prefix or a glob)
SPEC_NAMES: Final = ("[!_]*",)


@dataclass(frozen=True)
class PluginFiles:
    """What the loaded plugins add to pytest's file rules: ``spec_modules`` when pytest-relaxed is loaded."""

    spec_modules: bool = False

    def collects(self, name: str) -> bool:
        """Whether a file named ``name`` that ``python_files`` does not match is a test module all the same."""
        return self.spec_modules and name.endswith(".py") and name != "conftest.py" and not self.hides(name)

    def hides(self, name: str) -> bool:
        """Whether a file or folder named ``name`` is never collected (pytest-relaxed's ``pytest_ignore_collect``)."""
        return self.spec_modules and name.startswith("_")

    @property
    def notes(self) -> list[str]:
        if not self.spec_modules:
            return []
        return [
            "pytest-relaxed is loaded: every .py file but conftest.py is a test file too (a spec module, its classes"
            " and functions not named _* counted as tests), and no file or folder named _* is collected"
        ]


NO_PLUGIN_FILES: Final = PluginFiles()


def pytest11_plugins(search_path: Sequence[str]) -> dict[str, str]:
    """Every ``pytest11`` entry point installed on ``search_path``: its name, and the module it loads."""
    found: dict[str, str] = {}
    for folder in search_path:
        try:
            infos = sorted(Path(folder or ".").glob("*.*-info/entry_points.txt"))
        except OSError:
            continue
        for path in infos:
            for name, module in _pytest11(path).items():
                found.setdefault(name, module)
    return found


def _pytest11(path: Path) -> Mapping[str, str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    if "pytest11" not in text:
        return {}
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # entry-point names keep their case
    try:
        parser.read_string(text)
    except configparser.Error:
        return {}
    if not parser.has_section("pytest11"):
        return {}
    return {name.strip(): value.split(":")[0].strip() for name, value in parser.items("pytest11")}


def plugin_files(words: Sequence[str], search_path: Sequence[str], *, autoload: bool = True) -> PluginFiles:
    """The file rules of the known plugins pytest given ``words`` (addopts, PYTEST_ADDOPTS, the arguments) loads:
    installed (``pytest11_plugins``) and loaded by itself (``autoload``, and no ``--disable-plugin-autoload``), or
    named by ``-p``; not blocked by ``-p no:NAME``."""
    values = [v.strip() for v in every_value(words, "-p")]
    autoload = autoload and "--disable-plugin-autoload" not in words
    installed = pytest11_plugins(search_path)
    names = {name for name, module in installed.items() if module == RELAXED}
    if any(f"no:{name}" in values for name in names):
        return NO_PLUGIN_FILES
    loaded = (autoload and bool(names)) or any(v in (RELAXED, *names) for v in values)
    return PluginFiles(spec_modules=loaded)
