"""Every declared option (``OPTIONS``, in the order each subcommand's --help lists its own) and every config key.

The options of a stage sit in its module (``plan``, ``run``, ``report``), the config keys in ``keys``. Adding an
option: one ``Option`` in its stage's module (its flags, help with its default, the subcommands that take it, the
config key and action input if any), placed in ``OPTIONS`` where its subcommands list it; one field in the stage's
options object (``options.typed``); for a config key, one ``ConfigKey`` in ``keys``. docs/configuration.md's key
table is regenerated from these (``CI_SHARDS_REGEN_GOLDEN=1 pytest tests/unit/test_options.py``).
"""

from __future__ import annotations

from typing import Final

from ci_shards.options.declared.keys import CONFIG_KEYS
from ci_shards.options.declared.plan import (
    DEFAULT_MAX_SHARDS,
    PLAN_ALLOW_EMPTY,
    PLAN_OPTIONS,
    PLAN_OUTPUTS,
    PLANNING,
    PYTEST_ARGS,
)
from ci_shards.options.declared.report import AGGREGATE_HEAD, AGGREGATE_OPTIONS, AGGREGATE_TAIL, COVERAGE_GATE
from ci_shards.options.declared.run import (
    DEFAULT_JOB_MEMORY,
    LOCAL_HEAD,
    LOCAL_REPORTS,
    RUN_HEAD,
    RUN_OPTIONS,
    RUN_OUT,
    RUNNING,
)

__all__ = ["CONFIG_KEYS", "DEFAULT_JOB_MEMORY", "DEFAULT_MAX_SHARDS", "PLANNING", "PLAN_OPTIONS", "RUNNING"]

# every declared option, in the order each subcommand's --help lists its own
OPTIONS: Final = (
    *PLAN_OPTIONS,
    *AGGREGATE_HEAD,
    *PLAN_OUTPUTS,
    *RUN_HEAD,
    *PLAN_ALLOW_EMPTY,
    *LOCAL_HEAD,
    *RUN_OUT,
    *RUN_OPTIONS,
    *AGGREGATE_OPTIONS,
    *AGGREGATE_TAIL,
    *PYTEST_ARGS,
    *COVERAGE_GATE,
    *LOCAL_REPORTS,
)

# a CHOICE key accepts what its flag accepts
CONFIG_CHOICES: Final = {o.config: o.choices for o in OPTIONS if o.config is not None and o.choices is not None}

# action.yml inputs that are no option of the CLI: each with what it is for instead
ACTION_ONLY_INPUTS: Final = {
    "command": "which step of the action runs (ci-shards gha plan|run|aggregate|comment)",
    "fail-on-verdict": "whether the action's last step exits with aggregate's status (gha.inputs.step_exit)",
    "github-token": "the token the comment step and the artifact actions use",
    "run-id": "the workflow run whose artifacts the comment step downloads",
    "save-timings": "when the cache step saves the timings store",
    "working-directory": "where every step runs",
    "artifact-prefix": "the names of the uploaded artifacts (gha.inputs.shard_artifact_name)",
    "retention-days": "how long the uploaded artifacts are kept",
    "python-version": "the Python setup-python installs when no python is given",
}
