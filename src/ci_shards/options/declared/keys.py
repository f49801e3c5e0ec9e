"""The keys of ``ci-shards.yml`` / ``[tool.ci-shards]``: how each is checked, and its row of docs/configuration.md."""

from __future__ import annotations

from typing import Final

from ci_shards.options.declared.plan import DEFAULT_MAX_SHARDS
from ci_shards.options.spec import ConfigKey, ConfigKind

_SEE_SELECTION = "docs/selection.md"

# the keys of ci-shards.yml / [tool.ci-shards], in the order docs/configuration.md lists them
CONFIG_KEYS: Final = (
    ConfigKey(
        name="timings",
        kind=ConfigKind.STRING,
        default="none",
        meaning="timings file: pytest-split `.test_durations`, JUnit XML or a ci-shards store (docs/timings-store.md)",
    ),
    ConfigKey(name="variant", kind=ConfigKind.STRING, default="none", meaning="variant key in the store"),
    ConfigKey(
        name="python",
        kind=ConfigKind.STRING,
        default="`$VIRTUAL_ENV`'s, else ci-shards' own",
        meaning="interpreter whose pytest `--pytest` runs (docs/run.md#which-python)",
    ),
    ConfigKey(
        name="granularity",
        kind=ConfigKind.CHOICE,
        default="`auto`",
        meaning="`test`: items may go anywhere; `file`: files never split; `auto`: files whole unless balance needs"
        " a cut",
    ),
    ConfigKey(
        name="keep-together",
        kind=ConfigKind.CUSTOM,
        default="none",
        meaning="`class`, or glob patterns (matched against the item id and its file)",
    ),
    ConfigKey(
        name="weights",
        kind=ConfigKind.CUSTOM,
        default="none",
        meaning="pattern → factor (above 0, at most 1e6) applied to estimates",
    ),
    ConfigKey(
        name="shards",
        kind=ConfigKind.CUSTOM,
        default="required, or `auto` when `target-seconds` is set",
        meaning="number of shards",
    ),
    ConfigKey(
        name="target-seconds",
        kind=ConfigKind.NUMBER,
        default="none",
        meaning="`shards: auto` picks the smallest N whose slowest shard + overhead fits (else the fewest within"
        " 2 % of the best)",
    ),
    ConfigKey(
        name="shard-overhead",
        kind=ConfigKind.NUMBER,
        default="learned by aggregate (timings store), else 0",
        meaning="seconds of per-shard setup",
    ),
    ConfigKey(
        name="max-shards",
        kind=ConfigKind.COUNT,
        default=str(DEFAULT_MAX_SHARDS),
        meaning="upper limit for `shards: auto`",
    ),
    ConfigKey(
        name="workers",
        kind=ConfigKind.CUSTOM,
        default="1",
        meaning="pytest-xdist workers per shard, a number or `auto` (docs/run.md#workers)",
    ),
    ConfigKey(
        name="max-items-per-shard", kind=ConfigKind.COUNT, default="none", meaning="at most this many items per shard"
    ),
    ConfigKey(
        name="cut-cost",
        kind=ConfigKind.NUMBER,
        default="0",
        meaning="seconds charged for each extra shard a file is cut into (its module/class setup runs again there)",
    ),
    ConfigKey(name="strategy", kind=ConfigKind.STRING, default="`balanced`", meaning="packing strategy"),
    ConfigKey(
        name="allow-empty",
        kind=ConfigKind.BOOL,
        default="`false`",
        meaning="let a plan with no items, or a run in which no test ran, pass (`plan`, `matrix`, `run`, `local`,"
        " `aggregate` read it; docs/rules.md)",
    ),
    ConfigKey(
        name="fail-on",
        kind=ConfigKind.CHOICE,
        default="`any`",
        meaning='`any`: every failing test fails the build; `new`: only new ones (docs/aggregate.md, "Test history")',
    ),
    ConfigKey(
        name="quarantine",
        kind=ConfigKind.CUSTOM,
        flag_text="none",
        default="none",
        meaning="list of `{test, reason, expires}`: see below",
    ),
    ConfigKey(
        name="coverage",
        kind=ConfigKind.BOOL,
        default="`false`",
        meaning="measure coverage in each shard ([coverage.md](coverage.md)); read by `run` and `local`",
    ),
    ConfigKey(
        name="select",
        kind=ConfigKind.CUSTOM,
        default="`off`",
        meaning="change-based selection: `changed`, `shadow` or `off` (docs/selection.md)",
    ),
    ConfigKey(
        name="touchfiles",
        kind=ConfigKind.CUSTOM,
        flag_text="none",
        default="none",
        meaning="test globs → the source globs they depend on, and `global` globs that run everything"
        f" ({_SEE_SELECTION})",
    ),
    ConfigKey(
        name="selection",
        kind=ConfigKind.CUSTOM,
        default=f"see {_SEE_SELECTION}",
        meaning="`always`, `ignore`, `run-all-label`, `default-branch`, `on-default-branch`, `in-merge-queue`,"
        " `coverage`, `failures`",
    ),
)
