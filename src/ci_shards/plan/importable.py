"""Whether the shards' interpreter has a module, found without importing anything.

Discovery prices a test file whose body starts with ``np = pytest.importorskip("numpy")`` as the tests
it defines, but pytest skips the whole module at its import when the module is missing (networkx 3.6.1
without scipy, matplotlib, pandas: 35 of its 266 test files, 14 % of the tests counted): its shard
then runs nothing for that share of its estimate. ``module_finder`` answers for the import system
without running it: a built-in or standard-library name, a package folder, a namespace portion, a
``name.py`` or a compiled ``name.<suffix>`` (``importlib.machinery.all_suffixes``) on the search
path, or a name an import hook of ``sys.meta_path`` knows (an editable install: ``pyargs``). The
search path is the interpreter's ``sys.path`` (the plan runs on the shards' interpreter: ``run
--pytest``, ``local``) and, as pytest's ``prepend`` import mode adds them, the test file's folder
and those above it up to the rootdir. Anything found there counts as importable, never the reverse:
a wrong "missing" would under-price a file that runs, a wrong "present" only keeps today's estimate.
A dotted name (``pytest.importorskip("wcwidth._wcwidth_c")``) needs its top-level module and then the
submodule's file or folder inside a package folder of that name.
"""

from __future__ import annotations

import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ci_shards.plan.pyargs import module_location

_SUFFIXES = tuple(importlib.machinery.all_suffixes())  # .py, .pyc, .cpython-311-x86_64-linux-gnu.so, .so, …


def _in_folder(name: str, folder: Path) -> bool:
    """``name`` as a package or namespace folder, or a module file of any import suffix, in ``folder``."""
    try:
        return (folder / name).is_dir() or any((folder / f"{name}{suffix}").is_file() for suffix in _SUFFIXES)
    except OSError:  # an entry that cannot be read (a name too long, a folder without permission)
        return False


def module_finder(search_path: Sequence[str]) -> Callable[[str, Sequence[Path]], bool]:
    """``has(name, local_folders)``: whether module ``name`` (dotted or not) is importable from ``search_path``
    or one of ``local_folders`` (answers cached per name for the search path)."""
    folders = [Path(p or ".") for p in search_path]
    known: dict[str, bool] = {}

    def on_path(name: str) -> bool:
        if name not in known:
            builtin = name in sys.builtin_module_names or name in sys.stdlib_module_names
            found = builtin or any(_in_folder(name, f) for f in folders) or module_location(name, folders) is not None
            known[name] = found
        return known[name]

    def has(name: str, local_folders: Sequence[Path]) -> bool:
        top, *inner = name.split(".")
        if not all(part.isidentifier() for part in (top, *inner)):
            return True  # not a module name pytest could import: leave the estimate as it is
        if not (on_path(top) or any(_in_folder(top, f) for f in local_folders)):
            return False
        # the file's own folders first: pytest's prepend import mode puts its folder before the search path
        return not inner or _has_submodule(top, inner, [*local_folders, *folders])

    return has


def _has_submodule(top: str, inner: Sequence[str], folders: Sequence[Path]) -> bool:
    """Whether package ``top``, as the import system finds it in ``folders`` (in order), holds the submodule
    ``inner`` (``importorskip("pkg._ext")`` of a compiled module that was not built: wcwidth 0.9.4, whose unpacked
    sdist on the working directory comes before the installed copy that has it). The first regular package wins;
    namespace portions count together. A ``top`` that is a plain module or no folder here (the standard library's,
    a builtin, an import hook's) counts as having it: in doubt, present."""
    if top in sys.stdlib_module_names or top in sys.builtin_module_names:
        return True
    portions = []
    for folder in folders:
        package = folder / top
        if _in_folder("__init__", package):  # a regular package: the one imported
            return _in_package(package, inner)
        if any(_is_file(folder / f"{top}{suffix}") for suffix in _SUFFIXES):
            return True
        if _is_dir(package):
            portions.append(package)
    return not portions or any(_in_package(package, inner) for package in portions)


def _in_package(package: Path, inner: Sequence[str]) -> bool:
    *path, last = inner
    return _in_folder(last, package.joinpath(*path))


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False
