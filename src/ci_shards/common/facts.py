"""The runner facts of outcome.json (``runner``): where and by what a shard ran.

One typed value with one JSON form, so the key the runner writes is the key aggregate reads: the
CI run attempt decides which of several folders of one shard counts ("latest attempt wins").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

ATTEMPT_KEY: Final = "ci_run_attempt"
# written by ci-shards before the runner facts were typed (and by hand-built fixtures): read, never written
_OLD_ATTEMPT_KEY: Final = "run_attempt"


def _attempt(raw: object) -> int:
    """A run attempt as written (``2``, ``"2"``, ``""``); 0 when unknown or unusable."""
    if isinstance(raw, bool):
        return 0
    if isinstance(raw, int):
        return max(raw, 0)
    if isinstance(raw, str) and raw.strip().isdigit():
        return int(raw.strip())
    return 0


@dataclass(frozen=True, kw_only=True)
class RunnerFacts:
    ci_shards: str = ""  # the version that ran the shard
    os: str = ""
    python: str = ""
    hostname: str = ""
    ci_run_id: str = ""  # GITHUB_RUN_ID / CI_PIPELINE_ID
    ci_run_attempt: int = 0  # GITHUB_RUN_ATTEMPT; 0 when the CI does not say
    subreaper: bool = False
    problems: tuple[str, ...] = ()  # every reason the shard did not pass, the first is outcome.reason

    def to_json(self) -> dict[str, Any]:
        return {
            "ci_shards": self.ci_shards,
            "os": self.os,
            "python": self.python,
            "hostname": self.hostname,
            "ci_run_id": self.ci_run_id,
            ATTEMPT_KEY: self.ci_run_attempt,
            "subreaper": self.subreaper,
            "problems": list(self.problems),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunnerFacts:
        if not isinstance(data, Mapping):
            msg = "'runner' must be an object"
            raise ValueError(msg)
        attempt = data.get(ATTEMPT_KEY)
        if _attempt(attempt) == 0:
            attempt = data.get(_OLD_ATTEMPT_KEY)
        problems = data.get("problems", ())
        return cls(
            ci_shards=str(data.get("ci_shards", "")),
            os=str(data.get("os", "")),
            python=str(data.get("python", "")),
            hostname=str(data.get("hostname", "")),
            ci_run_id=str(data.get("ci_run_id", "")),
            ci_run_attempt=_attempt(attempt),
            subreaper=bool(data.get("subreaper", False)),
            problems=tuple(str(p) for p in problems) if isinstance(problems, list | tuple) else (),
        )
