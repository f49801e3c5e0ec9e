"""Project configuration: ``ci-shards.yml`` at the repo root, or ``[tool.ci-shards]`` in pyproject.toml.

Command-line flags override it (docs/configuration.md). Unknown keys are an error naming the key,
so a typo never silently changes nothing. The keys and how each is checked are declared in
``ci_shards.options.declared``; only the keys of kind CUSTOM have their parser here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ci_shards.common import toml_text
from ci_shards.common.errors import ConfigError, as_written, kind_of, why_unreadable
from ci_shards.common.tables import table_at
from ci_shards.model.plan import Granularity
from ci_shards.options.declared import CONFIG_CHOICES, CONFIG_KEYS
from ci_shards.options.spec import ConfigKey, ConfigKind
from ci_shards.report.quarantine import QuarantineEntry, parse_quarantine
from ci_shards.select.settings import SelectionSettings, SelectMode, parse_mode, parse_selection

CONFIG_FILE: Final = "ci-shards.yml"
# a weight scales estimates; beyond this a typo (1e308) would overflow the plan's arithmetic, not weigh
MAX_WEIGHT: Final = 1e6
PYPROJECT: Final = "pyproject.toml"


@dataclass(frozen=True, kw_only=True)
class Config:
    source: str = ""  # where it was read from ("" when there is no config)
    timings: str | None = None
    variant: str | None = None
    python: str | None = None  # --python: the interpreter of --pytest
    granularity: Granularity | None = None
    keep_together: tuple[str, ...] = ()
    weights: Mapping[str, float] = field(default_factory=dict)
    shards: str | None = None  # "N" or "auto"
    target_seconds: float | None = None
    shard_overhead: float | None = None
    max_shards: int | None = None
    workers: str | None = None  # "K" or "auto": pytest-xdist workers per shard
    max_items_per_shard: int | None = None
    cut_cost: float | None = None
    strategy: str | None = None
    allow_empty: bool | None = None  # --allow-empty: an empty plan / a run where no test ran passes
    fail_on: str | None = None  # aggregate --fail-on: new | any
    quarantine: tuple[QuarantineEntry, ...] = ()  # tests whose failures do not fail the build
    coverage: bool | None = None  # run --coverage (docs/coverage.md)
    select: SelectMode | None = None  # plan --select (docs/selection.md)
    selection: SelectionSettings = field(default_factory=SelectionSettings)  # keys touchfiles and selection


def _number(source: str, key: str, value: Any, *, integer: bool = False) -> Any:
    ok = not isinstance(value, bool) and isinstance(value, int if integer else (int, float))
    if not ok or not math.isfinite(float(value)) or value < (1 if integer else 0):
        kind = "a whole number ≥ 1" if integer else "a non-negative number"
        msg = f"{source}: {key!r} must be {kind}, not {as_written(value)}"
        raise ConfigError(msg)
    return int(value) if integer else float(value)


def _weight(source: str, pattern: str, value: Any) -> float:
    factor = float(_number(source, f"weights.{pattern}", value))
    if not 0 < factor <= MAX_WEIGHT:
        msg = f"{source}: 'weights.{pattern}' must be above 0 and at most {MAX_WEIGHT:g}, not {value!r}"
        raise ConfigError(msg)
    return factor


def _string(source: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        msg = f"{source}: {key!r} must be a non-empty string, not {as_written(value)}"
        raise ConfigError(msg)
    return value


def _keep_together(source: str, value: Any) -> tuple[str, ...]:
    rules = [value] if isinstance(value, str) else value
    if not isinstance(rules, list) or not all(isinstance(r, str) and r for r in rules):
        msg = f"{source}: 'keep-together' must be a list of glob patterns or 'class'"
        raise ConfigError(msg)
    return tuple(rules)


def _weights(source: str, value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping):
        msg = f"{source}: 'weights' must map glob patterns to factors"
        raise ConfigError(msg)
    return {str(k): _weight(source, str(k), v) for k, v in value.items()}


def _shards(source: str, value: Any) -> str:
    text = str(value)
    if text != "auto" and not (text.isdigit() and int(text) >= 1):
        msg = f"{source}: 'shards' must be a whole number ≥ 1 or 'auto', not {as_written(value)}"
        raise ConfigError(msg)
    return text


def _workers(source: str, value: Any) -> str:
    text = str(value)
    if isinstance(value, bool) or (text != "auto" and not (text.isdigit() and int(text) >= 1)):
        msg = f"{source}: 'workers' must be a whole number ≥ 1 or 'auto', not {as_written(value)}"
        raise ConfigError(msg)
    return text


# the keys whose values are more than one checked scalar; every other key is checked by its declared kind
_CUSTOM: Final[Mapping[str, Callable[[str, Any], Any]]] = {
    "keep_together": _keep_together,
    "weights": _weights,
    "shards": _shards,
    "workers": _workers,
    "quarantine": parse_quarantine,
    "select": parse_mode,
}
_SELECTION_KEYS: Final = ("touchfiles", "selection")  # read together by parse_selection
_KEYS: Final = {key.field: key for key in CONFIG_KEYS}


def _choice(source: str, key: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        listed = f"one of {', '.join(choices)}" if len(choices) > 2 else " or ".join(choices)
        msg = f"{source}: {key!r} must be {listed}, not {as_written(value)}"
        raise ConfigError(msg)
    return str(value)


def _boolean(source: str, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        msg = f"{source}: {key!r} must be true or false, not {as_written(value)}"
        raise ConfigError(msg)
    return value


def _checked(source: str, key: ConfigKey, raw_key: str, value: Any) -> Any:
    """One key's value, checked by its declared kind (options/declared/keys.py)."""
    if key.kind is ConfigKind.CUSTOM:
        return _CUSTOM[key.field](source, value)
    if key.kind is ConfigKind.STRING:
        return _string(source, raw_key, value)
    if key.kind is ConfigKind.BOOL:
        return _boolean(source, raw_key, value)
    if key.kind is ConfigKind.CHOICE:
        return _choice(source, key.name, value, CONFIG_CHOICES[key.name])
    return _number(source, raw_key, value, integer=key.kind is ConfigKind.COUNT)


def parse_config(data: Any, source: str) -> Config:
    """Validate a config mapping (keys may be written with ``-`` or ``_``)."""
    if data is None:
        return Config(source=source)
    if not isinstance(data, Mapping):
        msg = f"{source}: expected a mapping of settings, found {kind_of(data)}"
        raise ConfigError(msg)
    values: dict[str, Any] = {"source": source}
    selection: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = _KEYS.get(str(raw_key).replace("-", "_"))
        if key is None:
            msg = f"{source}: unknown key {raw_key!r} (see docs/configuration.md)"
            raise ConfigError(msg)
        if key.field in _SELECTION_KEYS:
            selection[key.field] = value
        else:
            values[key.field] = _checked(source, key, str(raw_key), value)
    if "granularity" in values:
        values["granularity"] = Granularity(values["granularity"])
    if selection:
        values["selection"] = parse_selection(source, selection.get("selection"), selection.get("touchfiles"))
    return Config(**values)


def _config_text(path: Path) -> str:
    """The text of a config file, or a ConfigError naming it: a file that is no UTF-8 text (or unreadable) is
    bad input, never a crash."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        msg = f"{path.name}: not UTF-8 text (byte {err.start})"
        raise ConfigError(msg) from None
    except OSError as err:
        msg = f"{path.name}: cannot read: {err.strerror or err}"
        raise ConfigError(msg) from None


def _read_pyproject(path: Path) -> Any:
    text = _config_text(path)
    if "tool.ci-shards" not in text and '"ci-shards"' not in text:
        return None
    try:
        data = toml_text.loads(text)
    except (ValueError, RecursionError) as err:  # TOMLDecodeError is a ValueError; so is a too long integer
        msg = f"{path}: not valid TOML: {why_unreadable(err)}"
        raise ConfigError(msg) from None
    tool = table_at(data, "tool")  # `tool = "ci-shards"` is TOML too: only a table holds our settings
    return tool.get("ci-shards") if tool is not None else None


def load_config(cwd: Path, explicit: str | None = None) -> Config:
    """``explicit`` (``--config``) if given, else ``ci-shards.yml``, else pyproject's table."""
    if explicit is not None:
        path = cwd / explicit
        if not path.is_file():
            msg = f"{explicit}: config file not found"
            raise ConfigError(msg)
    else:
        path = cwd / CONFIG_FILE
        if not path.is_file():
            pyproject = cwd / PYPROJECT
            if pyproject.is_file():
                table = _read_pyproject(pyproject)
                if table is not None:
                    return parse_config(table, f"{PYPROJECT} [tool.ci-shards]")
            return Config()
    if path.name.endswith(".toml"):
        return parse_config(_read_pyproject(path), f"{path.name} [tool.ci-shards]")
    # imported here, not at the top: only a ci-shards.yml needs it, and every command reads the config
    # (PyYAML is a tenth of ci-shards' start-up imports; issue 21)
    import yaml  # noqa: PLC0415

    text = _config_text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        msg = f"{path.name}: not valid YAML{where}"
        raise ConfigError(msg) from None
    except (ValueError, RecursionError) as err:  # built from valid YAML: an impossible date, a too long integer
        msg = f"{path.name}: not valid YAML: {why_unreadable(err)}"
        raise ConfigError(msg) from None
    return parse_config(data, path.name)
