"""The run stage's settings as the user gives them (flags over config): built once by ``options.typed.run_options``,
read by the runner and by ``local`` when it starts each shard's ``run``."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path

from ci_shards.judge import FlakyResult


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """How each shard's command runs, as the user set it: the options ``run`` and ``local`` share (``local``
    passes them to every ``run`` it starts), and what the runner reads of them (``runner.RunOptions.settings``)."""

    out: Path
    command: tuple[str, ...] = ()  # the words after --
    pytest: bool = False
    python: str | None = None  # --python as given (None: chosen at the edge, interpreter.default_python)
    junit: str | None = None
    timeout: float | None = None
    grace: float = 10.0
    graceful_signal: int = int(signal.SIGINT)
    retries: int = 0
    max_rerun_failures: int = 10
    flaky_result: FlakyResult = FlakyResult.PASS
    max_test_seconds: float | None = None
    accept_exit_code: bool = False
    leak_timeout: float = 0.5
    coverage: bool = False  # --coverage / --no-coverage, else the config's coverage
    coverage_map: bool = True
    coverage_map_per: str = "test"  # the map's contexts: "test" (node ids) or "file" (test files)
    allow_empty: bool = False
    workers: str | None = None  # --workers K|auto, else the config's (None: the plan's)
    worker_memory: int = 1 << 30  # --worker-memory: per-worker budget of --workers auto
