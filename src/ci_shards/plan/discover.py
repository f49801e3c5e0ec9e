"""Planning without the project's dependencies: test files found on disk plus the timings store.

A plan job that collects with ``pytest --collect-only`` must install the project's test
dependencies and import every test module before the first shard can start. Discovery instead
reads the project's own pytest settings as text (``testpaths``, ``python_files``,
``norecursedirs`` from pytest.ini, .pytest.ini, pyproject.toml ``[tool.pytest.ini_options]``,
tox.ini ``[pytest]`` or setup.cfg ``[tool:pytest]``, the first that has them, as pytest looks for
them) and walks the directories — no user code is imported. Other runners name their files by
``--glob``.

The files found are then merged with the timings (``merge_with_timings``, pure):
- a file with per-test timings contributes those test ids (so balance can cut it);
- a file without timings is counted, estimated from the tests it defines, read with ``ast``
  (``static_count``, ``new_files``: a cost per test learned from the timed files, else the 1 s per
  test a ``--pytest`` plan gives a test without timing), and offered by its tests' node ids
  (``cut_files``) so balance may cut it where the shards need it;
- timings of files that are no longer on disk are dropped and counted.
After planning, ``whole_files_as_items`` names every file that landed in one shard by its path
rather than its test ids, so tests added to it since the timings were recorded run there as
planned items; only the files balance cut keep test ids (a new test in one, or one the count could
not name, is run by the shard that owns its file, as an unplanned test).
"""

from __future__ import annotations

import ast
import configparser
import dataclasses
import fnmatch
import os
import shlex
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ci_shards.common import toml_text
from ci_shards.common.console import listed, plural
from ci_shards.common.errors import InputError, why_unreadable
from ci_shards.common.tables import table_at
from ci_shards.model.matching import collector_files, item_candidates, item_file
from ci_shards.model.plan import Plan, ShardPlan
from ci_shards.plan.collect import glob_items
from ci_shards.plan.conftest_ignores import ConftestIgnores, conftests_loaded
from ci_shards.plan.doctests import (
    collects_doctest_modules,
    count_doctests,
    doctest_globs,
    doctest_module,
    holds_examples,
)
from ci_shards.plan.hypothesis_profiles import ProfileReader
from ci_shards.plan.importable import module_finder
from ci_shards.plan.new_files import CountOf, estimate_new_files, not_counted
from ci_shards.plan.plugin_files import NO_PLUGIN_FILES, SPEC_NAMES, PluginFiles, plugin_files
from ci_shards.plan.pyargs import module_location
from ci_shards.plan.pytest_args import (
    NO_IGNORES,
    Ignores,
    check_no_cache_selection,
    every_value,
    ignores_in,
    last_value,
    names_rootdir_or_config,
    path_words,
    positional_words,
)
from ci_shards.plan.scope import Scope, scope_of
from ci_shards.plan.static_count import (
    DEFAULT_CLASSES,
    DEFAULT_FUNCTIONS,
    CountRules,
    FileCount,
    Fixture,
    Imports,
    count_tests,
    fixtures_in,
)

DEFAULT_PYTHON_FILES: Final = ("test_*.py", "*_test.py")
DEFAULT_NORECURSE: Final = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
ALWAYS_SKIPPED: Final = ("__pycache__",)
DATA_FILES_CAP: Final = 10_000  # a data folder's files counted for an estimate, at most
FALLBACK_FILE_SECONDS: Final = 1.0  # a new file's estimate when no file has timings at all
# pytest's own search order for its settings in one directory
INI_SOURCES: Final = (("pytest.ini", "pytest"), (".pytest.ini", "pytest"), ("tox.ini", "pytest"))


@dataclass(frozen=True)
class PytestSettings:
    """What pytest would read for collection, and from where (``source`` is "" for defaults)."""

    rootdir: Path
    source: str = ""
    testpaths: tuple[str, ...] = ()
    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES
    norecursedirs: tuple[str, ...] = DEFAULT_NORECURSE
    python_functions: tuple[str, ...] = DEFAULT_FUNCTIONS  # what a file's estimate counts as tests
    python_classes: tuple[str, ...] = DEFAULT_CLASSES
    addopts: tuple[str, ...] = ()  # read for --ignore/--ignore-glob, which pytest applies from there too
    pythonpath: tuple[str, ...] = ()  # folders pytest puts first on sys.path (relative to the rootdir)
    keys: tuple[str, ...] = ()  # every setting the source names (a plugin's, e.g. DJANGO_SETTINGS_MODULE, too)


def _words(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(shlex.split(value))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _settings(rootdir: Path, source: str, values: Mapping[str, Any]) -> PytestSettings:
    def words(key: str) -> tuple[str, ...] | None:
        found = _words(values.get(key))
        if values.get(key) is not None and found is None:
            raise InputError(source, f"pytest setting {key!r} must be a string or a list of strings")
        return found

    return PytestSettings(
        rootdir=rootdir,
        source=source,
        testpaths=words("testpaths") or (),
        # given empty, these are empty, not pytest's defaults (`-o python_files=`: no file collects by name)
        python_files=_given_or(words("python_files"), DEFAULT_PYTHON_FILES),
        norecursedirs=_given_or(words("norecursedirs"), DEFAULT_NORECURSE),
        python_functions=_given_or(words("python_functions"), DEFAULT_FUNCTIONS),
        python_classes=_given_or(words("python_classes"), DEFAULT_CLASSES),
        addopts=words("addopts") or (),
        pythonpath=words("pythonpath") or (),
        keys=tuple(values),
    )


def _given_or(given: tuple[str, ...] | None, default: tuple[str, ...]) -> tuple[str, ...]:
    return default if given is None else given


def _ini(path: Path, section: str) -> dict[str, str] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"), source=str(path))
    except (OSError, UnicodeDecodeError, configparser.Error) as err:
        raise InputError(path, f"cannot read pytest settings: {err}") from None
    return dict(parser[section]) if parser.has_section(section) else None


def _toml(path: Path) -> Mapping[str, Any]:
    try:
        data: Mapping[str, Any] = toml_text.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as err:  # ValueError: TOMLDecodeError, UnicodeDecodeError
        raise InputError(path, f"cannot read pytest settings: {why_unreadable(err)}") from None
    return data


def _pytest_toml(path: Path) -> Mapping[str, Any]:
    """pytest 9's own ``pytest.toml``/``.pytest.toml``: its ``[pytest]`` table, the settings even when empty; without
    one, a setting written outside any table is pytest's usage error (``_config_from_pytest_table``)."""
    data = _toml(path)
    table = table_at(data, "pytest")
    if table is not None:
        return table
    outside = [key for key, value in data.items() if not isinstance(value, Mapping)]
    if outside:
        raise InputError(
            path,
            f"pytest configuration must be under a [pytest] table (found top-level options: {', '.join(outside)}),"
            " as pytest says before it collects anything",
        )
    return {}


def _pyproject(path: Path) -> Mapping[str, Any] | None:
    """pytest 9.2's ``_config_from_tool_pytest``: ``[tool.pytest]``'s own keys (native TOML), else
    ``[tool.pytest.ini_options]`` (even empty); both at once is pytest's usage error, and a ``[tool.pytest]`` that
    holds nothing else is no settings (pytest then looks on: tox.ini, setup.cfg, the folders above)."""
    tool = table_at(_toml(path), "tool", "pytest")  # `tool = "x"` is TOML too: only a table holds pytest's settings
    if tool is None:
        return None
    native = {key: value for key, value in tool.items() if key != "ini_options"}
    options = table_at(tool, "ini_options")
    if native and options:
        raise InputError(
            path,
            "Cannot use both [tool.pytest] (native TOML types) and [tool.pytest.ini_options] (string-based INI format)"
            " simultaneously, as pytest says before it collects anything: keep one",
        )
    return native or options


def settings_in(directory: Path) -> PytestSettings | None:
    """The pytest settings of ``directory`` itself, the first source pytest would take (pytest 9.2's
    ``CONFIG_LOADERS_BY_NAME``, in its order)."""
    for name in ("pytest.toml", ".pytest.toml"):
        path = directory / name
        if path.is_file():  # pytest 9's own file counts even without a [pytest] table
            return _settings(directory, str(path), _pytest_toml(path))
    for name, section in INI_SOURCES[:2]:
        path = directory / name
        if path.is_file():  # pytest.ini counts even without a [pytest] section
            return _settings(directory, str(path), _ini(path, section) or {})
    candidates: list[tuple[Path, Callable[[Path], Mapping[str, Any] | None]]] = [
        (directory / "pyproject.toml", _pyproject),
        (directory / "tox.ini", lambda p: _ini(p, "pytest")),
        (directory / "setup.cfg", lambda p: _ini(p, "tool:pytest")),
    ]
    for path, read in candidates:
        if path.is_file():
            values = read(path)
            if values is not None:
                return _settings(directory, str(path), values)
    return None


def settings_given(settings: PytestSettings, words: Sequence[str], cwd: Path) -> PytestSettings:
    """``settings`` as pytest reads them with the user's ``words`` (its addopts' own words included): ``-c FILE``
    (``--config-file``, ``--inifile``) is the settings file instead of the one found, its folder the rootdir
    (``_pytest.config.findpaths.determine_setup``), and each ``-o KEY=VALUE`` (``--override-ini``) replaces that
    setting, the last of a key winning. Before, discovery read the file it found and none of these: ``-o
    python_files=check_*.py`` planned files pytest does not collect, ``-o testpaths=other`` the wrong folder."""
    config_file = last_value(words, "-c", "--config-file", "--inifile")
    if config_file:
        settings = _settings_of_file(cwd / config_file, _common_ancestor(cwd.absolute(), path_words(words, cwd)))
    words = [*settings.addopts, *words]
    overrides = dict(o.split("=", 1) for o in every_value(words, "-o", "--override-ini") if "=" in o)
    if not overrides:
        return settings
    values = {key: value for key, value in overrides.items() if key in _OVERRIDABLE}
    replaced = _settings(settings.rootdir, settings.source, values)
    return dataclasses.replace(settings, **{_OVERRIDABLE[key]: getattr(replaced, _OVERRIDABLE[key]) for key in values})


# the settings discovery reads, by their ini names (pytest's own aliases: none of these has one)
_OVERRIDABLE: Final = {
    "testpaths": "testpaths",
    "python_files": "python_files",
    "norecursedirs": "norecursedirs",
    "python_functions": "python_functions",
    "python_classes": "python_classes",
    "addopts": "addopts",
    "pythonpath": "pythonpath",
}


def _settings_of_file(path: Path, arguments_root: Path) -> PytestSettings:
    """The settings of the file ``-c`` names, read as pytest 9.2's loader for its name, else its suffix, reads it:
    ``pytest.toml`` its ``[pytest]`` table, ``pyproject.toml`` its ``[tool.pytest]`` tables, another ``.toml``
    either, ``.cfg`` ``[tool:pytest]``, any other ``[pytest]``; a file without them pytest's defaults. A path that
    is no file (``-c /dev/null``: no settings at all) roots at the arguments' common folder (``arguments_root``),
    as pytest 9.2 does (its issue #11502), not at the path's folder."""
    if not path.is_file():
        return PytestSettings(rootdir=arguments_root)
    values: Mapping[str, Any] | None
    if path.name in ("pytest.toml", ".pytest.toml"):
        values = _pytest_toml(path)
    elif path.name == "pyproject.toml":
        values = _pyproject(path)
    elif path.suffix == ".toml":  # [pytest], as pytest's own files (its #14705), else pyproject's tables
        values = table_at(_toml(path), "pytest") or _pyproject(path)
    else:
        values = _ini(path, "tool:pytest" if path.suffix == ".cfg" else "pytest")
    return _settings(path.parent.absolute(), str(path), values or {})


def find_settings(cwd: Path, default_root: Path | None = None, arg_dirs: Sequence[Path] = ()) -> PytestSettings:
    """Settings from ``cwd`` or its nearest ancestor that has them (pytest's rootdir search for
    runs without path arguments; ``_common_ancestor`` where it starts with them), else the defaults of the
    nearest pyproject.toml without a pytest table (pytest's configfile then); else, with no setup.py there either,
    the first settings up from one of the path arguments' own folders (``arg_dirs``); else pytest's defaults with
    ``default_root`` (``cwd`` unless given) as the root."""
    found = _locate([cwd])
    if found is not None:
        return found
    # then determine_setup's next rule: the nearest folder with a setup.py is the rootdir, with no configfile
    setup = next((d for d in (cwd, *cwd.parents) if (d / "setup.py").is_file()), None)
    if setup is not None:
        return PytestSettings(rootdir=setup)
    # then each argument's folder on its own (`pytest proj_a/tests proj_b/tests` from above both: proj_a's pytest.ini)
    found = _locate(arg_dirs) if arg_dirs and list(arg_dirs) != [cwd] else None
    return found or PytestSettings(rootdir=cwd if default_root is None else default_root)


def config_only_by_arguments(words: Sequence[str], cwd: Path) -> str:
    """The settings file pytest reads only through its path arguments' own folders (none up from their common
    folder, and no setup.py there), "" for none: the file a forced ``--rootdir`` hides from pytest, which then
    skips that search (``_pytest.config.findpaths.determine_setup``), so ``run`` names it with ``--config-file``."""
    paths = path_words(words, cwd)
    ancestor = _common_ancestor(cwd.absolute(), paths)
    if _locate([ancestor]) is not None:
        return ""
    # find_settings' later rules: a setup.py (no settings file) or the arguments' own folders, whose file is it
    return find_settings(ancestor, arg_dirs=_argument_dirs(paths, cwd)).source


def _argument_paths(paths: Sequence[str], cwd: Path) -> list[Path]:
    """Each path argument, absolute: pytest's initial paths (``tests/test_a.py::t`` is its file)."""
    return [Path(os.path.normpath(cwd.absolute() / word.split("::", 1)[0])) for word in paths]


def _argument_dirs(paths: Sequence[str], cwd: Path) -> list[Path]:
    """Each path argument's folder (a file's parent), as pytest's ``get_dirs_from_args`` takes them."""
    return [d if d.is_dir() else d.parent for d in _argument_paths(paths, cwd)]


def _locate(bases: Sequence[Path]) -> PytestSettings | None:
    """pytest 9.2's ``locate_config``: the first settings up from each of ``bases`` in turn, else the nearest
    pyproject.toml without a pytest table (the configfile even so: sqlparse 0.5.5 and wrapt 2.5.2 from their
    tests/), else None."""
    bare: Path | None = None
    for base in bases:
        for directory in (base, *base.parents):
            found = settings_in(directory)
            if found is not None:
                return found
            if bare is None and (directory / "pyproject.toml").is_file():
                bare = directory
    return None if bare is None else PytestSettings(rootdir=bare, source=str(bare / "pyproject.toml"))


def _common_ancestor(cwd: Path, words: Sequence[str]) -> Path:
    """Where pytest starts looking for its settings (``_pytest.config.findpaths.get_common_ancestor``): the
    folder that holds every path argument (``words``: paths that exist), else ``cwd``. From above a project
    (``-- python_dateutil-4.0.0/docs``) that is the project's folder, whose settings name its ``python_files``."""
    paths = [Path(os.path.normpath(cwd / word.split("::", 1)[0])) for word in words]
    if not paths:
        return cwd
    common = Path(os.path.commonpath(paths))
    return common.parent if common.is_file() else common


def _skip_dir(name: str, patterns: Sequence[str], path: Path, *, venvs: bool) -> bool:
    if name in ALWAYS_SKIPPED or any(_matches_dir(p, name, path) for p in patterns):
        return True
    return venvs and _in_venv(path)


def _in_venv(path: Path) -> bool:
    """A virtualenv's folder, or a conda environment's, which pytest leaves out unless --collect-in-virtualenv
    (``_pytest.main._in_venv``: ``pyvenv.cfg``, or ``conda-meta/history`` for the conda environments without it)."""
    return (path / "pyvenv.cfg").is_file() or (path / "conda-meta" / "history").is_file()


def _matches_dir(pattern: str, name: str, path: Path) -> bool:
    """pytest's ``fnmatch_ex``: a pattern without a separator matches the folder's name, one with a separator its
    absolute path, as ``*/`` + the pattern when relative (icalendar 7.3.2's ``norecursedirs =
    ["src/icalendar/tests/hypothesis"]``: matched against the name, it left the folder's tests planned)."""
    if "/" not in pattern and os.sep not in pattern:
        return fnmatch.fnmatch(name, pattern)
    pattern = pattern.replace("/", os.sep)
    return fnmatch.fnmatch(str(path.absolute()), pattern if os.path.isabs(pattern) else f"*{os.sep}{pattern}")


def _is_test_file(name: str, rel: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(rel if "/" in p else name, p) for p in patterns)


def file_id(path: Path, cwd: Path, root: Path) -> str:
    """A found file's id, by pytest's rule for node ids with ``cwd`` as the rootdir: relative to ``cwd``
    when it is under it, else relative to the collection argument ``root`` it was found in (a
    ``--pyargs`` package installed elsewhere: ``tests/test_x.py``, as pytest and pytest-split name it).
    A file that is itself the argument is held by no folder argument: relative to ``cwd`` (``../t/test_x.py``),
    as the shards' plugin names it (``pytest_plugin._ShardState.path_id``)."""
    return folder_prefix(path.parent, cwd, root) + path.name


FileRule = Callable[[str, str, Path], bool]  # (file name, its id, its path): whether the walk takes it


def _walk(
    root: Path,
    cwd: Path,
    settings: PytestSettings,
    ignores: Ignores,
    conftest: ConftestIgnores,
    *,
    wanted: FileRule,
    plugins: PluginFiles = NO_PLUGIN_FILES,
) -> set[str]:
    found: set[str] = set()
    # pytest follows a symlinked folder and names its files by the link (tests/linked/test_r.py); a link to an
    # ancestor repeats the tree until the system refuses the path (ELOOP), in both walks alike
    for directory, dirs, files in os.walk(root, followlinks=True):
        here = Path(directory)
        ruled = bool(conftest.of(here))  # once per folder: most folders have no collect_ignore rule
        dirs[:] = sorted(
            d
            for d in dirs
            if not (
                _skip_dir(d, settings.norecursedirs, here / d, venvs=ignores.venvs)
                or plugins.hides(d)
                or ignores.ignores(here / d)
                or (ruled and conftest.leaves_out(here / d))
            )
        )
        prefix = folder_prefix(here, cwd, root)  # file_id's rule, once per folder: the walk's hot loop
        for name in files:
            path = here / name
            rel = prefix + name
            if wanted(name, rel, path) and not ignores.ignores(path) and not (ruled and conftest.leaves_out(path)):
                found.add(rel)
    return found


def folder_prefix(folder: Path, cwd: Path, root: Path) -> str:
    """What ``file_id`` puts before the name of a file in ``folder`` ("" or ends in "/"), worked out once per folder
    by the walk: a file is under ``cwd`` or ``root`` exactly when its folder is, or is it."""
    if folder != cwd and cwd not in folder.parents and (folder == root or root in folder.parents):
        rel = folder.relative_to(root).as_posix()
    else:
        rel = Path(os.path.relpath(folder, cwd)).as_posix()
    return "" if rel == "." else rel + "/"


def discover_pytest_files(
    cwd: Path,
    settings: PytestSettings,
    paths: Sequence[str] = (),
    ignores: Ignores = NO_IGNORES,
    conftest: ConftestIgnores | None = None,
    *,
    plugins: PluginFiles = NO_PLUGIN_FILES,
) -> list[str]:
    """Test files pytest would collect from ``paths`` (relative to ``cwd``), else from ``testpaths``
    (``testpath_roots``: from the rootdir only), else from ``cwd``, less what ``ignores`` names and
    what the conftest.py files' ``collect_ignore`` say literally (``conftest`` collects what they
    left out); POSIX paths relative to ``cwd``. A file named directly is taken whatever its name, as
    pytest does. ``plugins``: what the loaded plugins collect and leave out beside (pytest-relaxed)."""
    cwd = cwd.absolute()  # ignores are absolute paths
    conftest = conftest if conftest is not None else ConftestIgnores(settings.rootdir.absolute())
    found: set[str] = set()

    def test_file(name: str, rel: str, _path: Path) -> bool:
        return (_is_test_file(name, rel, settings.python_files) or plugins.collects(name)) and not plugins.hides(name)

    for root in _roots(cwd, settings, paths):
        if root.is_file():
            found.add(file_id(root, cwd, root))
        elif root.is_dir():
            found |= _walk(root, cwd, settings, ignores, conftest, wanted=test_file, plugins=plugins)
    return sorted(found)


def discover_doctests(
    cwd: Path,
    settings: PytestSettings,
    paths: Sequence[str],
    ignores: Ignores,
    conftest: ConftestIgnores,
    *,
    modules: bool,
    globs: Sequence[str],
    plugins: PluginFiles = NO_PLUGIN_FILES,
) -> dict[str, int]:
    """Each file but a test file that pytest collects doctests from, found in one walk of the test files' folders,
    with the doctests it holds (``plan.doctests``): with ``modules`` (``--doctest-modules``) the ``.py`` files, each
    docstring with an example one; and the other files the doctest ``globs`` match, one each when it holds an
    example. Only files holding one; a file that cannot be read or parsed is left to pytest (and to the shard that
    runs unplanned files)."""
    cwd = cwd.absolute()
    counted: dict[str, int] = {}

    def holds_doctests(name: str, rel: str, path: Path) -> bool:
        module = name.endswith(".py")
        if module and (not modules or _is_test_file(name, rel, settings.python_files) or plugins.collects(name)):
            return False  # a test file is planned as one, its doctests with it
        if not module and not _is_test_file(name, rel, globs):
            return False
        try:
            source = path.read_bytes()
            if module:
                counted[rel] = count_doctests(source) if doctest_module(name, source) else 0
            else:
                counted[rel] = int(holds_examples(source))
        except (OSError, SyntaxError, ValueError, RecursionError):
            return False
        return counted[rel] > 0

    found: set[str] = set()
    for root in _roots(cwd, settings, paths):
        if root.is_dir():
            found |= _walk(root, cwd, settings, ignores, conftest, wanted=holds_doctests, plugins=plugins)
    return {rel: counted[rel] for rel in sorted(found)}


def _roots(cwd: Path, settings: PytestSettings, paths: Sequence[str]) -> list[Path]:
    """Where pytest's walk starts: ``paths`` (relative to ``cwd``), else the ``testpaths`` that exist, else ``cwd``;
    the outermost of overlapping ones. A node id (``tests/test_a.py::TestB``) starts at its file: the file is
    planned, and the shard's pytest, given the same words, runs what they name (``plan.scope``)."""
    # an absolute path (a --pyargs package) stays as it is
    roots: list[Path] = [cwd / p.split("::", 1)[0] for p in paths]
    return _outermost(roots or testpath_roots(cwd, settings) or [cwd])


def testpath_roots(cwd: Path, settings: PytestSettings) -> list[Path]:
    """The folders ``testpaths`` name (relative to the rootdir, globs allowed) that exist, as pytest 9.2's
    ``Config._decide_args`` reads them: only when pytest runs in the rootdir itself. From a subfolder it collects
    the working directory (execnet 2.1.2's ``testpaths = testing`` from its ``doc/``), and so it does when they
    match nothing (with a warning)."""
    if cwd.resolve() != settings.rootdir.resolve():
        return []
    roots: list[Path] = []
    for entry in settings.testpaths:
        roots += sorted(settings.rootdir.glob(entry)) if any(c in entry for c in "*?[") else [settings.rootdir / entry]
    return [r for r in roots if r.exists()]


def _outermost(roots: Sequence[Path]) -> list[Path]:
    """The roots less those inside another one, in order: pytest collects overlapping arguments once,
    from the outer one (``normalize_collection_arguments``), which then names the files."""
    absolute = [Path(os.path.normpath(r)) for r in roots]
    return list(dict.fromkeys(r for r in absolute if not any(o in r.parents for o in absolute)))


def _left_out(files: Iterable[str], cwd: Path, ignores: Ignores, conftest: ConftestIgnores) -> set[str]:
    """The ``files`` (relative to ``cwd``) that ``--ignore``/``--ignore-glob`` or a conftest's collect_ignore
    leave out, themselves or by a folder above them up to ``cwd``: each folder asked once (pygments' 1,500 timed
    data files share a few dozen)."""
    folders: dict[Path, bool] = {}

    def out(entry: Path) -> bool:
        if entry not in folders:
            inside = entry != cwd and cwd in entry.parents
            folders[entry] = inside and (ignores.ignores(entry) or conftest.leaves_out(entry) or out(entry.parent))
        return folders[entry]

    return {file for file in files if out(cwd / file)}


def _left_out_note(left_out: Sequence[Path], cwd: Path) -> str:
    names = [Path(os.path.relpath(p, cwd.absolute())).as_posix() for p in left_out]
    return f"left out {plural(len(names), 'path')} that conftest.py's collect_ignore names: {listed(names)}"


def _unseen_tests_note(hooks: Mapping[Path, Sequence[str]], cwd: Path) -> str:
    """Where tests come from that no count of the test files sees (``conftest_ignores.UNSEEN_TEST_HOOKS``):
    the plan is balanced without them, so the user reads why a shard may run long."""
    here = cwd.absolute()
    names = [f"{Path(os.path.relpath(p, here)).as_posix()} ({', '.join(h)})" for p, h in sorted(hooks.items())]
    # a plugin module a conftest.py loads (``pytest_plugins``) is named among them as what it is: a file
    kind = "conftest.py file" if all(p.name == "conftest.py" for p in hooks) else "file"
    return (
        f"not counted: the tests that hooks make in {plural(len(names), kind)}, {listed(names)}:"
        " files of other kinds collected as tests run unplanned in the shard that runs"
        " unplanned files, and generated cases count as one test; a --pytest plan balances what pytest collects"
    )


# --------------------------------------------------------------------------------------------
# merging with the timings (pure)


@dataclass(frozen=True)
class Discovery:
    items: tuple[str, ...]
    estimates: Mapping[str, float]  # the timings, plus an estimate for every new file
    new_files: tuple[str, ...]
    dropped_items: int  # timings of files no longer on disk
    dropped_files: int
    new_file_notes: tuple[str, ...] = ()  # how the new files were estimated
    new_file_tests: Mapping[str, int] = dataclasses.field(default_factory=dict)  # tests counted in each
    # pytest's rootdir, relative to the working directory, when the ids are relative to it (``rootdir_ids``)
    rootdir: str | None = None

    @property
    def notes(self) -> list[str]:
        notes = list(self.new_file_notes)
        if self.dropped_items:
            notes.append(
                f"dropped the timings of {plural(self.dropped_items, 'item')} in {plural(self.dropped_files, 'file')}"
                " no longer on disk"
            )
        return notes


def merge_with_timings(
    files: Iterable[str],
    timings: Mapping[str, float],
    on_disk: Callable[[str], bool],
    count_of: CountOf = not_counted,
) -> Discovery:
    """Items from ``files`` found on disk and the ``timings`` keys; ``on_disk(file)`` says whether
    a timed item's file still exists (timed files outside the discovered ones are kept: they ran).
    A new file is estimated from the tests ``count_of(file)`` counts in it (``new_files``); one it
    does not count (None) as the median known file."""
    by_file: dict[str, list[str]] = {}
    for key in timings:
        by_file.setdefault(item_file(key), []).append(key)
    kept: dict[str, list[str]] = {}
    dropped_items = dropped_files = 0
    for file, keys in sorted(by_file.items()):
        if on_disk(file):
            # Per-test ids win over the keys that cover them: an older whole-file key, and the sum the
            # store records for every planned item that is not a single test (a cut file's part,
            # ``f.py::test_a`` for all of ``f.py::test_a[0]``...). Planned beside its own tests, such
            # a key is an item no test reports as, so its shard failed with "never reported"
            # (marshmallow 4.4.0, conformance run 2).
            covering = {a for k in keys for a in item_candidates(k)[1:]}
            tests = [k for k in keys if k not in covering]
            kept[file] = sorted(tests) or [file]
        else:
            dropped_items += len(keys)
            dropped_files += 1
    totals = {file: sum(timings[k] for k in keys) for file, keys in kept.items()}
    file_seconds = statistics.median(totals.values()) if totals else FALLBACK_FILE_SECONDS
    new_files = tuple(sorted(set(files) - set(kept)))
    estimates = {k: timings[k] for keys in kept.values() for k in keys}
    new = estimate_new_files(new_files, count_of, timed=totals, fallback_seconds=file_seconds)
    estimates.update(new.seconds)
    items = tuple(sorted([k for keys in kept.values() for k in keys] + list(new.seconds)))
    return Discovery(items, estimates, new_files, dropped_items, dropped_files, new.notes, new.tests)


def whole_files_as_items(plan: Plan) -> Plan:
    """The plan with every file whose items all landed in one shard named by the file itself, so
    tests added to it since the timings were taken run as planned items of that shard."""
    shards_of: dict[str, set[int]] = {}
    for shard in plan.shards:
        for item in shard.items:
            shards_of.setdefault(item_file(item), set()).add(shard.index)
    shards: list[ShardPlan] = []
    for shard in plan.shards:
        whole = {item_file(i) for i in shard.items if len(shards_of[item_file(i)]) == 1}
        items = sorted({item_file(i) if item_file(i) in whole else i for i in shard.items})
        shards.append(dataclasses.replace(shard, items=tuple(items)))
    return dataclasses.replace(plan, shards=tuple(shards))


# --------------------------------------------------------------------------------------------
# the edge: files on disk


def discover_items(
    *,
    cwd: Path,
    pytest_files: bool,
    pytest_args: Sequence[str],
    globs: Sequence[str],
    timings: Mapping[str, float],
    search_path: Sequence[str] = (),
    autoload: bool = True,
) -> tuple[Discovery, list[str]]:
    """The discovery and its notes: test files by the project's pytest settings (``pytest_files``;
    path words of ``pytest_args`` narrow them, or with ``--pyargs`` the packages they name, looked up
    on ``search_path``: the target interpreter's ``sys.path``) and/or by ``globs``, merged with ``timings``.
    Named as pytest names them: relative to its rootdir (``rootdir_ids``), which the discovery then records.
    ``autoload``: whether pytest loads the installed plugins by itself (no PYTEST_DISABLE_PLUGIN_AUTOLOAD), whose
    own file rules (``plugin_files``) discovery then follows."""
    settings = None
    plugins = NO_PLUGIN_FILES
    paths = path_words(pytest_args, cwd)
    if pytest_files:
        ancestor = _common_ancestor(cwd.absolute(), paths)
        settings = find_settings(ancestor, default_root=cwd, arg_dirs=_argument_dirs(paths, cwd))
        settings = settings_given(settings, pytest_args, cwd)
        plugins = plugin_files([*settings.addopts, *pytest_args], search_path, autoload=autoload)
    root = rootdir_ids(settings, pytest_args, cwd)
    arguments = _argument_paths(paths, cwd)  # pytest's initial paths, which name the files outside its rootdir
    if root is not None:  # a file outside the working directory as ../x.py: outside what pytest walks from it
        timings = rebase_ids(timings, cwd=root, ids_root=cwd, within=False, arguments=arguments)
    found, notes = _discover_items(
        cwd=cwd,
        settings=settings,
        pytest_args=pytest_args,
        globs=globs,
        timings=timings,
        search_path=search_path,
        plugins=plugins,
    )
    notes = [*plugins.notes, *notes]
    if root is None:
        return found, notes
    return dataclasses.replace(
        found,
        items=tuple(rebase_ids(dict.fromkeys(found.items, 0.0), cwd=cwd, ids_root=root, arguments=arguments)),
        estimates=rebase_ids(found.estimates, cwd=cwd, ids_root=root, arguments=arguments),
        rootdir=Path(os.path.relpath(root, cwd.absolute())).as_posix(),
    ), notes


def rootdir_ids(settings: PytestSettings | None, words: Sequence[str], cwd: Path) -> Path | None:
    """pytest's rootdir when it is not the working directory: the folder of the settings file it found (run
    from ``tests/`` of a project whose pyproject.toml is above, or from above it with ``-- proj/tests``). pytest's
    node ids are relative to it (``tests/test_a.py::t`` from ``tests/``), and so are the plan's and the shards'
    (``run`` forces that rootdir, as for a ``--pytest`` plan); with no settings file, the nearest folder with a
    setup.py. None where discovery's own names are pytest's: neither (pytest's rootdir is then the arguments'
    common folder), or a ``--rootdir``/``-c`` of the user's, which decide it otherwise."""
    if settings is None or settings.rootdir.resolve() == cwd.resolve():
        return None
    if not settings.source and not (settings.rootdir / "setup.py").is_file():
        return None
    if names_rootdir_or_config(words):
        return None
    return settings.rootdir.absolute()


def rebase_ids(
    ids: Mapping[str, float], *, cwd: Path, ids_root: Path, within: bool = True, arguments: Sequence[Path] = ()
) -> dict[str, float]:
    """``ids`` (relative to ``cwd``) renamed relative to ``ids_root``, each whose file or folder exists under it
    (with ``within`` false, anywhere: ``../x.py``); one outside it relative to the first of the path
    ``arguments`` that holds it, as pytest names it (``_pytest.nodes._check_initialpaths_for_relpath``: from a
    monorepo's root, ``proj_a/tests proj_b/tests`` under proj_a's settings name ``check_b.py``). An id whose file
    is not under ``cwd`` is such a name: found under the first argument holding it, it is renamed from there (the
    timings a run wrote, read back); the others stay as they are (a --pyargs package elsewhere names its files
    from its own folder; a deleted file)."""
    root = ids_root.absolute()

    def renamed(file: str) -> str:
        path = Path(os.path.normpath(cwd.absolute() / file))
        if not path.exists():
            path = next((p for a in arguments if (p := Path(os.path.normpath(a / file))).exists()), path)
        if not path.exists():
            return file
        if not within or path == root or root in path.parents:
            return Path(os.path.relpath(path, root)).as_posix()
        holder = next((a for a in arguments if path == a or a in path.parents), None)
        return file if holder is None else Path(os.path.relpath(path, holder)).as_posix()

    files: dict[str, str] = {}  # each file looked up on disk once, not once per test it holds
    rebased: dict[str, float] = {}
    for key, seconds in ids.items():
        file, sep, rest = key.partition("::")
        if file not in files:
            files[file] = renamed(file)
        rebased.setdefault(f"{files[file]}{sep}{rest}", seconds)
    return rebased


def _discover_items(
    *,
    cwd: Path,
    settings: PytestSettings | None,
    pytest_args: Sequence[str],
    globs: Sequence[str],
    timings: Mapping[str, float],
    search_path: Sequence[str],
    plugins: PluginFiles = NO_PLUGIN_FILES,
) -> tuple[Discovery, list[str]]:
    """``discover_items`` with the ids relative to ``cwd``; ``settings``: pytest's (None: ``--glob`` alone)."""
    files: list[str] = []
    notes: list[str] = []
    count_of: CountOf = not_counted
    scope: Scope | None = None
    on_disk = [cwd]  # where a timed file's id may be found: the working directory, a --pyargs package
    if settings is not None:
        paths, where = _collection_roots(pytest_args, settings, cwd.absolute(), search_path)
        # a folder argument outside the working directory (a --pyargs package, ../tests) names its files from itself
        on_disk += [r for r in _outermost([cwd.absolute() / p for p in paths]) if cwd.absolute() not in r.parents]
        words = [*settings.addopts, *pytest_args]  # what pytest reads its options from, the settings' first
        check_no_cache_selection(words)
        ignores = ignores_in(words, cwd.absolute())
        conftest = conftests_loaded(words, settings.rootdir.absolute(), cwd.absolute())
        files += discover_pytest_files(cwd, settings, paths, ignores, conftest, plugins=plugins)
        roots = _roots(cwd.absolute(), settings, paths)
        testpaths = settings.testpaths if testpath_roots(cwd.absolute(), settings) else ()
        where = where or " ".join(testpaths) or "the working directory"
        source = f"settings from {os.path.relpath(settings.source, cwd)}" if settings.source else "pytest's defaults"
        notes.append(
            f"discovered {plural(len(files), 'test file')} in {where}"
            f" ({source}, python_files {' '.join(settings.python_files)})"
        )
        modules, doctest_patterns = collects_doctest_modules(words), doctest_globs(words)
        doctests = {}
        if modules or doctest_patterns:  # pytest's doctest plugin on: else no walk
            doctests = discover_doctests(
                cwd, settings, paths, ignores, conftest, modules=modules, globs=doctest_patterns, plugins=plugins
            )
        notes += _doctests_notes(doctests, doctest_patterns)
        scope = scope_of(roots, paths, cwd.absolute())
        timings, beyond = _collected_timings(
            timings, files, cwd=cwd.absolute(), ignores=ignores, conftest=conftest, scope=scope
        )
        notes += [_beyond_note(beyond, where)] if beyond else []
        if conftest.left_out:
            notes.append(_left_out_note(list(conftest.left_out), cwd))
        if conftest.hooks:
            notes.append(_unseen_tests_note(conftest.hooks, cwd))
        count_of = _with_doctests(
            _file_counter(settings, words, plugins, cwd=cwd, on_disk=on_disk, files=files, search_path=search_path),
            doctests,
        )
        files += doctests
    if globs:
        files += glob_items(globs, cwd=cwd)
    found = merge_with_timings(files, timings, lambda f: any((base / f).is_file() for base in on_disk), count_of)
    found = narrowed(found, scope) if scope is not None and scope.node_ids else found
    return found, notes + found.notes


def _collected_timings(
    timings: Mapping[str, float],
    files: Sequence[str],
    *,
    cwd: Path,
    ignores: Ignores,
    conftest: ConftestIgnores,
    scope: Scope,
) -> tuple[dict[str, float], dict[str, int]]:
    """The timings of what pytest collects, and the count by file of those outside the arguments' ``scope``.
    Timings of a file the rules leave out are not a file to run (they date from before the rule); a file
    discovery found (the walk passed it, or it was named) is planned whatever its timings. A folder's key is
    the skipped test of its conftest (``COLLECTOR_SKIPPED_TYPE``), known to the timings and no file to plan. A
    module's dotted name (``tests.test_np``: pytest's --junitxml names a module that skipped at collection so, and
    ``timings import`` keeps what it reads) is the timing of the file it names."""
    timings = _collectors_as_files(timings, files)
    timed_files = {item_file(k) for k in timings}.difference(files)
    gone = _left_out(timed_files, cwd, ignores, conftest) | {f for f in timed_files if (cwd / f).is_dir()}
    return _within(scope, {k: v for k, v in timings.items() if item_file(k) not in gone})


def _collectors_as_files(timings: Mapping[str, float], files: Sequence[str]) -> Mapping[str, float]:
    named = collector_files(timings, files)
    if not named:
        return timings
    renamed: dict[str, float] = {}
    for key, seconds in timings.items():
        file = named.get(key, key)
        renamed[file] = renamed.get(file, 0.0) + seconds
    return renamed


def _within(scope: Scope, timings: Mapping[str, float]) -> tuple[dict[str, float], dict[str, int]]:
    """The timings of what pytest collects from the arguments (``plan.scope``), and the count of the others by
    file."""
    kept: dict[str, float] = {}
    beyond: dict[str, int] = {}
    for key, seconds in timings.items():
        if scope.keeps(key):
            kept[key] = seconds
        else:
            beyond[item_file(key)] = beyond.get(item_file(key), 0) + 1
    return kept, beyond


def _beyond_note(beyond: Mapping[str, int], where: str) -> str:
    return (
        f"not planned: the timings of {plural(sum(beyond.values()), 'item')} in {plural(len(beyond), 'file')}"
        f" pytest does not collect from {where} ({listed(sorted(beyond), 3)})"
    )


def narrowed(found: Discovery, scope: Scope) -> Discovery:
    """``found`` without the parts of files named by node ids that no node id covers (``static_count``'s
    parts of a file without timings); a file none of whose items is left is planned whole, at their
    estimate: its shard's pytest runs what the ids name."""
    kept = [i for i in found.items if scope.keeps(i)]
    left = {item_file(i) for i in kept}
    whole = {item_file(i) for i in found.items} - left
    estimates = dict(found.estimates)
    for file in whole:
        estimates[file] = sum(s for i, s in found.estimates.items() if item_file(i) == file and i in found.items)
    return dataclasses.replace(found, items=tuple(sorted([*kept, *whole])), estimates=estimates)


def _file_counter(
    settings: PytestSettings,
    words: Sequence[str],
    plugins: PluginFiles,
    *,
    cwd: Path,
    on_disk: Sequence[Path],
    files: Sequence[str],
    search_path: Sequence[str],
) -> CountOf:
    """``_test_counter`` for the test ``files``; a spec module pytest-relaxed collects (``plugins``: a file that
    ``python_files`` does not name) counted by its rules instead, every class and function not named ``_*``, and
    never cut: its tests' ids are the plugin's, which no reading here checks."""
    spec = {
        f for f in files if plugins.collects(Path(f).name) and not _is_test_file(Path(f).name, f, settings.python_files)
    }
    counter = _test_counter(settings, words, cwd=cwd, on_disk=on_disk, files=set(files) - spec, search_path=search_path)
    if not spec:
        return counter
    spec_settings = dataclasses.replace(settings, python_functions=SPEC_NAMES, python_classes=SPEC_NAMES)
    spec_counter = _test_counter(spec_settings, words, cwd=cwd, on_disk=on_disk, files=spec, search_path=search_path)

    def count_of(file: str) -> FileCount | str | None:
        if file not in spec:
            return counter(file)
        count = spec_counter(file)
        return dataclasses.replace(count, parts=()) if isinstance(count, FileCount) else count

    return count_of


def _test_counter(
    settings: PytestSettings,
    words: Sequence[str],
    *,
    cwd: Path,
    on_disk: Sequence[Path],
    files: set[str],
    search_path: Sequence[str],
) -> CountOf:
    """``_counter`` for the test ``files`` by the project's settings and pytest's ``words`` (-m, -k, the hypothesis
    profile), looking modules up where the shards' interpreter would."""
    rules = CountRules(
        settings.python_functions,
        settings.python_classes,
        markexpr=last_value(words, "-m"),
        keywordexpr=last_value(words, "-k"),
    )
    rootdir = settings.rootdir.absolute()
    profiles = ProfileReader(rootdir, last_value(words, "--hypothesis-profile"))
    pythonpath = [str(rootdir / p) for p in settings.pythonpath]
    has_module = module_finder([*pythonpath, str(cwd.absolute()), *search_path])
    doctest_modules = collects_doctest_modules(words)
    return _counter(on_disk, files, rules, rootdir, profiles, has_module=has_module, doctest_modules=doctest_modules)


def _doctests_notes(doctests: Mapping[str, int], globs: Sequence[str]) -> list[str]:
    modules = {f: n for f, n in doctests.items() if f.endswith(".py")}
    texts = [f for f in doctests if not f.endswith(".py")]
    notes = []
    if modules:
        notes.append(
            f"planned {plural(len(modules), 'module')} for the doctests --doctest-modules collects from them"
            f" ({plural(sum(modules.values()), 'doctest')} counted, each estimated as one test):"
            f" {listed(list(modules))}"
        )
    if texts:
        notes.append(
            f"planned {plural(len(texts), 'text file')} pytest collects as one doctest each"
            f" (--doctest-glob {' '.join(globs)}): {listed(texts)}"
        )
    return notes


def _with_doctests(count_of: CountOf, doctests: Mapping[str, int]) -> CountOf:
    """``count_of`` that also counts the modules planned for their doctests, each doctest one test (planned whole:
    no part of a module is a node id pytest runs apart, but for its doctests' own ids)."""
    if not doctests:
        return count_of
    return lambda file: FileCount(tests=doctests[file]) if file in doctests else count_of(file)


def _counter(
    bases: Sequence[Path],
    python_files: set[str],
    rules: CountRules,
    rootdir: Path,
    profiles: ProfileReader,
    *,
    has_module: Callable[[str, Sequence[Path]], bool] = lambda _name, _folders: True,
    doctest_modules: bool = False,
) -> CountOf:
    """``count_of`` for ``new_files``: the tests a file pytest would collect defines, or why it
    cannot be read as Python (one short reason: the file is still planned, never a crash). With
    ``doctest_modules`` (``--doctest-modules``) a test file's docstring examples are items of it too
    (``tests/test_a.py::test_a.helper``), which no reading of its test functions names: a file holding them is
    counted with them and never cut (its parts would leave them to run unplanned)."""
    by_folder: dict[Path, dict[str, Fixture]] = {}
    trees: dict[Path, ast.Module | None] = {}

    def conftest_fixtures(folder: Path) -> dict[str, Fixture]:
        """The fixtures of the conftest.py files from ``rootdir`` down to ``folder``, the nearest winning."""
        if folder not in by_folder:
            above = conftest_fixtures(folder.parent) if folder != rootdir and rootdir in folder.parents else {}
            try:
                conftest = folder / "conftest.py"  # its params lists may come from the suite's modules
                own = fixtures_in(conftest.read_bytes(), imports=_import_resolver(conftest, rootdir, trees))
            except (OSError, SyntaxError, ValueError, RecursionError):  # none, or pytest will say what is wrong
                own = {}
            by_folder[folder] = {**above, **own}
        return by_folder[folder]

    def count_of(file: str) -> FileCount | str | None:
        if file not in python_files:
            return None
        # the working directory's file, else a --pyargs package's (its ids are relative to the package's folder)
        path = next((b / file for b in bases if (b / file).is_file()), bases[0] / file).absolute()
        try:
            # bytes: Python's own encoding rules
            examples = profiles.examples(path.parent)  # a conftest's hypothesis profile
            source = path.read_bytes()
            count = count_tests(
                source,
                rules if examples is None else dataclasses.replace(rules, examples=examples),
                conftest_fixtures(path.parent),
                path_names=_chain_names(path, rootdir),
                files_in=lambda parts, suffixes: files_under(path.parent.joinpath(*parts), suffixes),
                # pytest's prepend import mode puts the file's folder (the first above its packages) first
                has_module=lambda name: has_module(name, [path.parent, *_folders_up_to(path.parent, rootdir)]),
                imports=_import_resolver(path, rootdir, trees),
            )
            doctests = count_doctests(source) if doctest_modules and doctest_module(path.name, source) else 0
            return dataclasses.replace(count, tests=count.tests + doctests, parts=()) if doctests else count
        except SyntaxError as err:  # a bad encoding is one too (unicode error)
            return f"{type(err).__name__} at line {err.lineno}: {err.msg}"
        except (OSError, ValueError, RecursionError) as err:  # null bytes; nesting deeper than the parser goes
            return f"{type(err).__name__}: {err}"

    return count_of


def _import_resolver(path: Path, rootdir: Path, trees: dict[Path, ast.Module | None]) -> Imports:
    """The suite's modules a ``from … import`` of ``path`` (or of a module it led to) names, parsed once
    each (``trees``, shared by every file of the plan)."""

    def resolve(origin: str, level: int, name: str | None) -> tuple[str, ast.Module] | None:
        target = _import_target(Path(origin) if origin else path, level, name, rootdir)
        if target is None:
            return None
        if target not in trees:
            try:
                trees[target] = ast.parse(target.read_bytes())
            except (OSError, SyntaxError, ValueError, RecursionError):  # pytest will say what is wrong
                trees[target] = None
        tree = trees[target]
        return (str(target), tree) if tree is not None else None

    return resolve


def _import_target(file: Path, level: int, name: str | None, rootdir: Path) -> Path | None:
    """The file of the suite that ``from <level dots><name> import …`` in ``file`` imports: relative to
    its package (``from . import X``: the package's ``__init__.py``), or absolute from its folder, the folders
    above it or the rootdir (pytest's prepend import mode puts such a folder first); only a file below the
    rootdir (never an installed package)."""
    parts = name.split(".") if name else []
    if not (parts or level) or not all(p.isidentifier() for p in parts):
        return None
    if level:
        bases = [file.parents[level - 1]] if level <= len(file.parents) else []
    else:
        bases = [file.parent, *_folders_up_to(file.parent, rootdir)]
    for base in bases:
        # ``from . import X``: no module named, the package itself
        module = [base.joinpath(*parts).with_suffix(".py")] if parts else []
        for candidate in (*module, base.joinpath(*parts, "__init__.py")):
            if candidate.is_file() and rootdir in candidate.parents:
                return candidate
    return None


def _folders_up_to(folder: Path, rootdir: Path) -> list[Path]:
    """The folders above ``folder`` up to the rootdir (none when it is not below it)."""
    return [p for p in folder.parents if p == rootdir or rootdir in p.parents]


def _chain_names(path: Path, rootdir: Path) -> tuple[str, ...]:
    """The names of a test file's collection chain that ``-k`` matches: pytest's ``Dir`` nodes below
    the rootdir (``KeywordMatcher.from_item`` leaves the rootdir's own out) and the module's file name."""
    try:
        return path.relative_to(rootdir).parts
    except ValueError:  # a --pyargs package elsewhere: its own folder
        return path.parts[-2:]


def files_under(path: Path, suffixes: frozenset[str] = frozenset()) -> int:
    """How many cases a named data path holds (0 when it is neither a folder nor a file), counted
    up to ``DATA_FILES_CAP``, with one of ``suffixes`` if any (``static_count.literal_suffixes``): a
    folder's files by their name without suffix (``x.toml`` and its expected ``x.json``: one case),
    a list file's lines (a manifest of cases). A plan job never walks a huge tree for an estimate."""
    if path.is_file():
        return _listed_cases(path, suffixes)
    if not path.is_dir():
        return 0
    cases: set[tuple[str, str]] = set()
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ALWAYS_SKIPPED]
        for name in files:
            stem, dot, suffix = name.rpartition(".")
            if not suffixes or (dot and f".{suffix}" in suffixes):
                cases.add((root, stem if dot and stem else name))
        if len(cases) >= DATA_FILES_CAP:
            return DATA_FILES_CAP
    return len(cases)


def _listed_cases(path: Path, suffixes: frozenset[str]) -> int:
    """The lines of a list file that name a file beside it (with one of ``suffixes`` if any): a
    manifest of cases (tomlkit 0.15.2's toml-test ``files-toml-1.1.0``). 0 for a file most of whose
    lines name no file: a data file (a JSON, a CSV), not a list of cases."""
    try:
        if path.stat().st_size > 1_000_000:
            return 0
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError):
        return 0
    named = [line for line in lines[:DATA_FILES_CAP] if ".." not in line and (path.parent / line).is_file()]
    if not lines or 2 * len(named) < min(len(lines), DATA_FILES_CAP):
        return 0
    return sum(1 for line in named if not suffixes or line.endswith(tuple(suffixes)))


def _check_paths_exist(pytest_args: Sequence[str], cwd: Path) -> None:
    """Refuse a collection argument shaped as a test module or node id (``test_x.py``, ``tests/x.py``,
    ``…::test_y``) that names nothing on disk: pytest stops on it ("ERROR: file or directory not found: …", exit 4)
    and runs no test, as ``--pytest``'s collection says. Any other word may be the value of a plugin's option this
    reader does not know (``--html reports/run.html``, ``--alluredir build/allure``: a folder yet to be written), so
    pytest alone decides about it, and a shard that stops on it says so (``run.exit_causes``)."""
    for word in positional_words(pytest_args):
        path = word.split("::", 1)[0]
        shaped = "::" in word or path.endswith(".py")
        if shaped and not (cwd / path).exists():
            raise InputError(
                word,
                "file or directory not found, so pytest would stop with a usage error (exit 4) and run no test;"
                " name a path that exists (relative to the working directory, as pytest reads it)",
            )


def _collection_roots(
    pytest_args: Sequence[str], settings: PytestSettings, cwd: Path, search_path: Sequence[str]
) -> tuple[list[str], str]:
    """What pytest collects from (paths relative to ``cwd``, or absolute for a ``--pyargs`` package
    elsewhere) and how the note names it ("" for no argument: ``testpaths`` or the working directory).
    With ``--pyargs``, each positional word is a module name first, as for pytest, resolved without
    importing it (``plan.pyargs``), else a path."""
    if "--pyargs" not in (*settings.addopts, *pytest_args):
        _check_paths_exist(pytest_args, cwd)
        paths = path_words(pytest_args, cwd)
        return paths, ", ".join(paths)
    # pytest's own order: the pythonpath setting first, then the working directory (python -m pytest)
    search = [settings.rootdir / p for p in settings.pythonpath] + [cwd]
    search += [Path(p) if p else cwd for p in search_path]
    roots: list[str] = []
    named: list[str] = []
    for word in positional_words(pytest_args):
        name, sep, rest = word.partition("::")
        location = module_location(name, [p.absolute() for p in search])
        if location is None and (cwd / name).exists():
            roots.append(word)
            named.append(word)
        elif location is None:
            raise InputError(
                word,
                "--pyargs: no module or package of that name on the search path (pythonpath setting, the working"
                " directory, this Python's sys.path), so pytest would not find it either",
            )
        else:  # a module's node id (``pkg.tests.test_m::TestB``) names part of its file, as a path's does
            inside = location == cwd or cwd in location.parents
            root = os.path.relpath(location, cwd) if inside else str(location)
            roots.append(root + sep + rest)
            named.append(f"{word} ({root})")
    return roots, "--pyargs " + ", ".join(named) if named else ""
