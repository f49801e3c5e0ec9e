"""GitHub: the environment of a run (PR number, fork detection, API URL) and workflow-command
annotations. Pure: the environment and the event payload come in as parameters. The PR comment
(HTTP) is ``comment.py``.

Sources: workflow commands and their escaping, actions/toolkit ``command.ts``; annotation caps
(10 per type per step, 50 per job), actions/toolkit's problem-matchers docs, "Limitations"; fork PRs
get a read-only token, docs.github.com/en/actions/reference/github_token-reference.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final

from ci_shards.console import escape_data, escape_property, plural, strip_control
from ci_shards.errors import InputError
from ci_shards.model import FailureKind, FailureRecord
from ci_shards.report import md
from ci_shards.report.aggregate import Verdict
from ci_shards.report.frames import failing_line
from ci_shards.report.groups import message_of

ANNOTATIONS_PER_TYPE: Final = 10  # GitHub shows 10 per type per step; the rest are silently dropped
DEFAULT_API_URL: Final = "https://api.github.com"


# --------------------------------------------------------------------------------------------
# the run's context


@dataclass(frozen=True, kw_only=True)
class GitHubContext:
    api_url: str = DEFAULT_API_URL
    repository: str = ""
    event_name: str = ""
    event: Mapping[str, Any] = field(default_factory=dict)
    token: str = field(default="", repr=False)  # never printed, not even in repr()
    workflow: str = ""
    job: str = ""
    run_id: str = ""
    run_attempt: str = ""
    server_url: str = "https://github.com"
    step_summary: str = ""
    actions: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str], event: Mapping[str, Any] | None = None) -> GitHubContext:
        return cls(
            api_url=(env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            repository=env.get("GITHUB_REPOSITORY", ""),
            event_name=env.get("GITHUB_EVENT_NAME", ""),
            event=event or {},
            token=env.get("GITHUB_TOKEN", "") or env.get("GH_TOKEN", ""),
            workflow=env.get("GITHUB_WORKFLOW", ""),
            job=env.get("GITHUB_JOB", ""),
            run_id=env.get("GITHUB_RUN_ID", ""),
            run_attempt=env.get("GITHUB_RUN_ATTEMPT", ""),
            server_url=(env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
            step_summary=env.get("GITHUB_STEP_SUMMARY", ""),
            actions=env.get("GITHUB_ACTIONS") == "true",
        )

    @property
    def pr_number(self) -> int | None:
        pull = self.event.get("pull_request")
        if isinstance(pull, Mapping) and isinstance(pull.get("number"), int):
            return int(pull["number"])
        issue = self.event.get("issue")
        if isinstance(issue, Mapping) and "pull_request" in issue and isinstance(issue.get("number"), int):
            return int(issue["number"])
        return None

    @property
    def is_fork_pr(self) -> bool:
        """A ``pull_request`` from another repository: its GITHUB_TOKEN is read-only (GitHub's token reference)."""
        pull = self.event.get("pull_request")
        if self.event_name not in ("pull_request", "pull_request_review") or not isinstance(pull, Mapping):
            return False
        head = pull.get("head") or {}
        repo = head.get("repo") if isinstance(head, Mapping) else None
        full_name = repo.get("full_name") if isinstance(repo, Mapping) else None
        return bool(full_name) and full_name != self.repository

    @property
    def comment_key(self) -> str:
        """One comment per workflow and job (two jobs with ci-shards do not overwrite each other)."""
        return f"{self.workflow or 'ci-shards'}/{self.job or 'aggregate'}"

    @property
    def run_url(self) -> str:
        if not (self.repository and self.run_id):
            return ""
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"


def load_event(path: str | Path | None) -> dict[str, Any]:
    """The webhook payload at ``GITHUB_EVENT_PATH`` ({} when absent; an unreadable one is an InputError)."""
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read the GitHub event payload: {err}") from None
    return data if isinstance(data, dict) else {}


# --------------------------------------------------------------------------------------------
# annotations (workflow commands)


def _annotation(kind: str, message: str, *, title: str, file: str | None = None, line: int | None = None) -> str:
    props = []
    if file:
        props.append(f"file={escape_property(file)}")
        if line:
            props.append(f"line={line}")
    props.append(f"title={escape_property(md.cap(' '.join(strip_control(title).split()), 255))}")
    text = md.cap(strip_control(message).strip(), 4000) or kind
    return f"::{kind} {','.join(props)}::{escape_data(text)}"


def _usefulness(record: FailureRecord) -> tuple[int, int]:
    """Shard-level problems first (they hide the most), then failures with a file, then the rest."""
    order = {FailureKind.SHARD: 0, FailureKind.TIMED_OUT: 1, FailureKind.ERROR: 2, FailureKind.FAILED: 2}
    return (order.get(record.kind, 3), 0 if record.file else 1)


def repo_relative(file: str | None, workspace: str) -> str | None:
    """GitHub places an annotation only with a repository-relative path (a ``../`` path is not shown): an
    absolute path under the workspace is made relative; one outside it is dropped (no file=)."""
    if not file:
        return None
    path = PurePosixPath(file.replace("\\", "/"))
    if not path.is_absolute():
        return path.as_posix().removeprefix("./")
    if workspace:
        try:
            return path.relative_to(PurePosixPath(workspace)).as_posix()
        except ValueError:
            return None
    return None


def _where(record: FailureRecord, test_line: int | None, workspace: str) -> dict[str, Any]:
    """``file``/``line`` of an annotation: the failing line the trace names (deepest frame in the
    test's file, else in the repository), else the test's own line; none for a never-run item."""
    if record.kind is FailureKind.NOT_RUN:
        return {"file": None, "line": None}
    frame = failing_line(record.text, record.file, workspace=workspace)
    if frame is not None:
        return {"file": frame.path, "line": frame.line}
    if not _looks_like_path(record.file):  # a class name standing in for a file (Surefire): no file to point at
        return {"file": None, "line": None}
    return {"file": repo_relative(record.file, workspace), "line": test_line}


_SOURCE_SUFFIX: Final = re.compile(
    r"\.(py|pyi|[cm]?[jt]sx?|go|rs|java|kt|kts|scala|rb|cs|fs|php|swift|c|cc|cpp|h|hpp|m|ex|exs)$"
)


def _looks_like_path(file: str | None) -> bool:
    """A file path, not a dotted class name such as ``org.example.FooTest`` that a producer without
    file attributes leaves as the test's only location."""
    if not file:
        return False
    return "/" in file or "\\" in file or bool(_SOURCE_SUFFIX.search(file))


def annotation_lines(verdict: Verdict, *, per_type: int = ANNOTATIONS_PER_TYPE, workspace: str = "") -> list[str]:
    """At most ``per_type`` ``::error``s and ``::warning``s, the most useful first, then one ``::notice``
    per type saying how many more there are and where to find them. ``workspace`` is
    ``GITHUB_WORKSPACE``, to make absolute file paths repository-relative."""
    lines_by_id = {c.test_id: c.line for c in verdict.cases if c.line is not None}
    errors = sorted(
        (r for r in verdict.failures if r.kind not in (FailureKind.FLAKY, FailureKind.NOT_RUN)), key=_usefulness
    )
    missing = [r for r in verdict.failures if r.kind is FailureKind.NOT_RUN]
    warnings = [r for r in verdict.failures if r.kind is FailureKind.FLAKY]
    out: list[str] = []
    if missing:  # one annotation for all missing items: they share one cause
        first = ", ".join(r.test_id for r in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        errors.insert(
            0,
            FailureRecord(
                shard=missing[0].shard,
                test_id=f"{plural(len(missing), 'planned item')} never ran",
                kind=FailureKind.NOT_RUN,
                message=f"never reported by any shard: {first}{more}",
            ),
        )
    for kind, records in (("error", errors), ("warning", warnings)):
        for record in records[:per_type]:
            prefix = "flaky: " if record.kind is FailureKind.FLAKY else ""
            first_line = (message_of(record).splitlines() or [record.kind.value])[0]
            # shard-level records repeat their reason in the text: say it once
            detail = record.text if record.text.strip() and record.text.strip() not in first_line else ""
            out.append(
                _annotation(
                    kind,
                    f"{first_line}\n\n{detail}" if detail else first_line,
                    title=f"{prefix}{record.test_id} (shard {record.shard})",
                    **_where(record, lines_by_id.get(record.test_id), workspace),
                )
            )
        if len(records) > per_type:
            out.append(
                f"::notice title={escape_property('ci-shards')}::"
                + escape_data(
                    f"{plural(len(records) - per_type, 'more ' + kind)} "
                    f"{'is' if len(records) - per_type == 1 else 'are'} not annotated "
                    f"(GitHub shows {per_type} per type); "
                    "see the job summary and the merged failures.jsonl"
                )
            )
    return out
