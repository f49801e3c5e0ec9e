"""``--pyargs`` module names resolved to their folders without importing anything.

pytest resolves ``--pyargs pkg.sub`` with ``importlib.util.find_spec("pkg.sub")``
(``_pytest.main.search_pypath``), which imports ``pkg`` and runs its ``__init__``: user code, which a
discovery plan job must not run (it may not even have the project's dependencies). Here the import
system's path search is done on the file system instead: the entries of the search path in order
(the target interpreter's ``sys.path``, after the working directory, which ``python -m pytest``
puts first, and the project's ``pythonpath`` setting, which pytest puts before both), the first
entry holding ``pkg`` as a regular package (``pkg/__init__.py``) or a module (``pkg.py``) wins, and
each sub-name is looked up inside the package found, as ``__path__`` would be. Folders without an
``__init__.py`` are namespace portions, merged across entries, as the import system merges them;
a name that ends on one is not resolved (pytest's ``search_pypath`` does not take namespace
packages either). A package installed in editable mode through an import hook (no path entry holds
it) is found by asking the hooks on ``sys.meta_path`` for its top-level name alone, which runs the
finders but not the package (only a dotted name imports its parents).
"""

from __future__ import annotations

import importlib.machinery
import sys
from collections.abc import Sequence
from pathlib import Path


def _find(parts: Sequence[str], locations: Sequence[Path]) -> Path | None:
    head, rest = parts[0], parts[1:]
    portions: list[Path] = []
    for location in locations:
        package = location / head
        if (package / "__init__.py").is_file():
            return _find(rest, [package]) if rest else package
        if not rest and (location / f"{head}.py").is_file():
            return location / f"{head}.py"
        if package.is_dir():
            portions.append(package)
    return _find(rest, portions) if rest and portions else None


def _hooked_top_level(name: str) -> list[Path]:
    """Where an import hook on ``sys.meta_path`` (an editable install's finder) puts a top-level
    package; [] for none. Only those finders are asked (the path search is done above, and
    ``sys.modules`` is this process's, not the shard's); ``find_spec`` of a name without dots imports
    nothing."""
    found: list[Path] = []
    for finder in sys.meta_path:
        if finder in (importlib.machinery.PathFinder, importlib.machinery.BuiltinImporter):
            continue
        if finder is importlib.machinery.FrozenImporter or not hasattr(finder, "find_spec"):
            continue
        try:
            spec = finder.find_spec(name, None)
        except (ImportError, ValueError, TypeError):
            continue
        if spec is not None and spec.submodule_search_locations:
            found += [Path(p).parent for p in spec.submodule_search_locations]
    return found


def path_location(name: str, search_path: Sequence[Path]) -> Path | None:
    """``module_location`` on the search path's folders alone, no import hook asked."""
    parts = name.split(".")
    return _find(parts, search_path) if all(p.isidentifier() for p in parts) else None


def module_location(name: str, search_path: Sequence[Path]) -> Path | None:
    """The folder of package ``name`` (or the file of module ``name``), or None when the search path
    does not hold it."""
    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    found = _find(parts, search_path)
    if found is None:
        hooked = [p for p in _hooked_top_level(parts[0]) if p not in search_path]
        found = _find(parts, hooked) if hooked else None
    return found
