"""How many examples a project's hypothesis tests run by default, read from its conftest.py files.

``static_count`` prices a ``@given`` test at its ``max_examples``: a literal ``@settings`` on it,
else hypothesis' default of 100. Projects often change that default for every test through a
settings profile their ``conftest.py`` registers and loads (hypothesis' docs, *Settings
profiles*: ``settings.register_profile("ci", max_examples=1000)`` then
``settings.load_profile("ci")``), or that ``--hypothesis-profile NAME`` (hypothesis' pytest
plugin) chooses. Read here with ``ast``, nothing imported:

- ``register_profile(NAME, max_examples=N)``, also through a parent (``register_profile(NAME,
  settings(max_examples=N))`` or ``parent=settings(...)``), with a literal name and number;
- the profile loaded: ``--hypothesis-profile`` among the run's words wins, else the last literal
  ``load_profile(NAME)`` of the conftest files from the rootdir down (``os.getenv(VAR, NAME)`` and
  ``os.environ.get(VAR, NAME)`` count as their default ``NAME``: the plan job's environment is not
  the shards');
- a profile that does not set ``max_examples`` keeps hypothesis' default (attrs 26.1.0's
  "patience" sets only a deadline and a health check).

What a profile does not say, and what one example costs, only a timing tells. Pure but
``ProfileReader``, the edge that reads the conftest files.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Profiles:
    examples: dict[str, int] = field(default_factory=dict)  # registered profile → its max_examples
    loaded: str | None = None  # the last profile a conftest loads


def _name(node: ast.expr) -> str:
    func = node.func if isinstance(node, ast.Call) else node
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _literal_int(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value > 0:
        return node.value
    return None


def _profile_name(node: ast.expr | None) -> str | None:
    """A literal name, or the literal default of ``os.getenv(VAR, NAME)`` / ``os.environ.get(VAR, NAME)``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Call) and _name(node) in ("getenv", "get") and len(node.args) == 2:
        return _profile_name(node.args[1])
    return None


def _max_examples(call: ast.Call) -> int | None:
    """``max_examples`` of a ``register_profile``/``settings`` call, its own or its parent's."""
    own = _literal_int(next((k.value for k in call.keywords if k.arg == "max_examples"), None))
    if own is not None:
        return own
    parents = [a for a in call.args if isinstance(a, ast.Call) and _name(a) == "settings"]
    parents += [k.value for k in call.keywords if k.arg == "parent" and isinstance(k.value, ast.Call)]
    for parent in parents:
        found = _max_examples(parent) if isinstance(parent, ast.Call) else None
        if found is not None:
            return found
    return None


def profiles_in(source: str | bytes) -> Profiles:
    """The profiles one conftest registers with a ``max_examples``, and the one it loads (raises
    ``SyntaxError``/``ValueError`` when it is not Python)."""
    examples: dict[str, int] = {}
    loaded: str | None = None
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        if _name(node) == "register_profile":
            name, count = _profile_name(node.args[0]), _max_examples(node)
            if name is not None and count is not None:
                examples[name] = count
        elif _name(node) == "load_profile":
            loaded = _profile_name(node.args[0]) or loaded
    return Profiles(examples, loaded)


def default_examples(conftests: Iterable[Profiles], chosen: str = "") -> int | None:
    """The ``max_examples`` a test below these conftests (outermost first) runs without its own
    ``@settings``: the chosen (``--hypothesis-profile``) or last loaded profile's, if it sets one."""
    examples: dict[str, int] = {}
    loaded: str | None = None
    for profiles in conftests:
        examples.update(profiles.examples)
        loaded = profiles.loaded or loaded
    name = chosen or loaded
    return examples.get(name) if name else None


class ProfileReader:
    """The edge: ``default_examples`` for a test file's folder, from the conftest.py files between
    ``rootdir`` and it (read once each; one that cannot be read says nothing: pytest will say why)."""

    def __init__(self, rootdir: Path, chosen: str = "") -> None:
        self.rootdir, self.chosen = rootdir, chosen
        self.read: dict[Path, Profiles] = {}

    def _profiles(self, folder: Path) -> Profiles:
        if folder not in self.read:
            try:
                self.read[folder] = profiles_in((folder / "conftest.py").read_bytes())
            except (OSError, SyntaxError, ValueError, RecursionError):
                self.read[folder] = Profiles()
        return self.read[folder]

    def examples(self, folder: Path) -> int | None:
        inside = folder == self.rootdir or self.rootdir in folder.parents
        chain = [*reversed([f for f in folder.parents if self.rootdir in f.parents or f == self.rootdir]), folder]
        return default_examples((self._profiles(f) for f in chain) if inside else [], self.chosen)
