"""The selection's configuration: ``select``, ``touchfiles`` and ``selection`` in ci-shards.yml. Pure.

``options/config.py`` calls ``parse_touchfiles`` and ``parse_selection`` so a bad value is a ``ConfigError``
naming the key when the config is loaded, like every other key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final

from ci_shards.common.errors import ConfigError, as_written


class SelectMode(str, Enum):
    CHANGED = "changed"  # plan only what the change can break
    SHADOW = "shadow"  # plan everything, record what would have been skipped
    OFF = "off"


# a change to any of these can affect any test: it runs everything
DEFAULT_GLOBAL: Final = (
    "*.lock",
    "requirements*.txt",
    "constraints*.txt",
    "package-lock.json",
    "pnpm-lock.yaml",
    "conftest.py",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "tox.ini",
    "pytest.ini",
    "noxfile.py",
    ".coveragerc",
    ".python-version",
    ".github/workflows/**",
    ".github/actions/**",
    ".gitlab-ci.yml",
    ".circleci/**",
    ".buildkite/**",
    "ci-shards.yml",
    "tests/data/**",
    "test/data/**",
    "tests/fixtures/**",
    "testdata/**",
)
# a change to these affects no test (unless a test file matches: test files are always in the change)
DEFAULT_IGNORE: Final = ("*.md", "*.rst", "docs/**", "LICENSE*", "AUTHORS*", "CHANGELOG*", ".gitignore")
DEFAULT_LABEL: Final = "ci-shards:run-all"


@dataclass(frozen=True, kw_only=True)
class SelectionSettings:
    touchfiles: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # test glob → source globs
    global_globs: tuple[str, ...] = DEFAULT_GLOBAL
    ignore: tuple[str, ...] = DEFAULT_IGNORE
    always: tuple[str, ...] = ()  # test files or items (globs) that always run
    run_all_label: str = DEFAULT_LABEL
    default_branch: str | None = None  # None: from the CI, else git's origin/HEAD
    select_on_default_branch: bool = False
    select_in_merge_queue: bool = False
    coverage: str | None = None  # coverage.json of a full base-branch run
    failures: str | None = None  # failures.jsonl (or a list of test ids) of the last base-branch run


def _globs(source: str, key: str, value: Any) -> tuple[str, ...]:
    globs = [value] if isinstance(value, str) else value
    if not isinstance(globs, list) or not all(isinstance(g, str) and g for g in globs):
        msg = f"{source}: {key!r} must be a glob or a list of globs, not {as_written(value)}"
        raise ConfigError(msg)
    return tuple(globs)


def parse_touchfiles(source: str, value: Any) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    """``touchfiles``: ``{test glob: [source globs]}`` plus ``global: [globs]`` (added to the defaults)."""
    if not isinstance(value, Mapping):
        msg = f"{source}: 'touchfiles' must map test globs to source globs (and 'global' to globs)"
        raise ConfigError(msg)
    mapping: dict[str, tuple[str, ...]] = {}
    extra: tuple[str, ...] = ()
    for key, globs in value.items():
        if key == "global":
            extra = _globs(source, "touchfiles.global", globs)
        else:
            mapping[str(key)] = _globs(source, f"touchfiles.{key}", globs)
    return mapping, extra


def _choice(source: str, key: str, value: Any) -> bool:
    if value not in ("run-all", "select"):
        msg = f"{source}: 'selection.{key}' must be run-all or select, not {as_written(value)}"
        raise ConfigError(msg)
    return bool(value == "select")


def _text(source: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        msg = f"{source}: 'selection.{key}' must be a non-empty string, not {as_written(value)}"
        raise ConfigError(msg)
    return value


def parse_selection(source: str, value: Any, touchfiles: Any = None) -> SelectionSettings:
    """``selection:`` (docs/selection.md) and ``touchfiles:``; unknown keys are an error naming them."""
    values: dict[str, Any] = {}
    if touchfiles is not None:
        mapping, extra = parse_touchfiles(source, touchfiles)
        values["touchfiles"] = mapping
        values["global_globs"] = (*DEFAULT_GLOBAL, *extra)
    if value is None:
        return SelectionSettings(**values)
    if not isinstance(value, Mapping):
        msg = f"{source}: 'selection' must be a mapping of settings, not {as_written(value)}"
        raise ConfigError(msg)
    for raw_key, item in value.items():
        key = str(raw_key).replace("-", "_")
        if key in ("always", "ignore"):
            values[key] = _globs(source, f"selection.{raw_key}", item)
        elif key in ("run_all_label", "default_branch", "coverage", "failures"):
            values[key] = _text(source, raw_key, item)
        elif key == "on_default_branch":
            values["select_on_default_branch"] = _choice(source, raw_key, item)
        elif key == "in_merge_queue":
            values["select_in_merge_queue"] = _choice(source, raw_key, item)
        else:
            msg = f"{source}: unknown key 'selection.{raw_key}' (see docs/selection.md)"
            raise ConfigError(msg)
    return SelectionSettings(**values)


def parse_mode(source: str, value: Any) -> SelectMode:
    try:
        return SelectMode(value)
    except ValueError:
        msg = f"{source}: 'select' must be changed, shadow or off, not {as_written(value)}"
        raise ConfigError(msg) from None
