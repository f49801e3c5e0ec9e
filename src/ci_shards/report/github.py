"""GitHub: the environment of a run (PR number, fork detection, API URL) and workflow-command
annotations. Pure: the environment and the event payload come in as parameters. The PR comment
(HTTP) is ``comment.py``.

Sources: workflow commands and their escaping, actions/toolkit ``command.ts``; annotation caps
(10 per type per step, 50 per job), actions/toolkit's problem-matchers docs, "Limitations"; fork PRs
get a read-only token, docs.github.com/en/actions/reference/github_token-reference.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final

from ci_shards.common import json_text
from ci_shards.common.console import escape_data, escape_property, plural, strip_control
from ci_shards.common.errors import InputError
from ci_shards.model.failures import FailureKind, FailureRecord
from ci_shards.report import md, story
from ci_shards.report.aggregate import Verdict
from ci_shards.report.frames import failing_line
from ci_shards.report.groups import group_failures, interleave, message_of

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
        data = json_text.loads(Path(path).read_text(encoding="utf-8"))
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
    """At most ``per_type`` ``::error``s and ``::warning``s, then one ``::notice`` per type saying how many more
    there are and where to find them. ``workspace`` is ``GITHUB_WORKSPACE``, to make absolute file paths
    repository-relative.

    The errors are spent on distinct failures first (issue 27: 30 copies of one parametrized failure took 8 of
    the 10 and a different failure got none): the never-run items (one annotation), shard-level problems of
    shards with no test failure to point at (never started, timed out between tests, unverified), then one per
    failure group at its failing line, its title counting the group, then further members of the groups in
    turn while the budget lasts."""
    lines_by_id = {c.test_id: c.line for c in verdict.cases if c.line is not None}
    records = [r for r in verdict.failures if r.kind not in (FailureKind.FLAKY, FailureKind.NOT_RUN)]
    tests = [r for r in records if r.kind is not FailureKind.SHARD]
    pointed = {r.shard for r in tests}
    shard_level = [r for r in records if r.kind is FailureKind.SHARD and r.shard not in pointed]
    missing = [r for r in verdict.failures if r.kind is FailureKind.NOT_RUN]
    head = ([_never_ran(missing, story.missing_causes(verdict)[0])] if missing else []) + shard_level
    groups = group_failures(tests, {c.test_id: c.type for c in verdict.cases if c.type})
    counted = {g.first.test_id: g.count for g in groups}
    errors = head + interleave([g.records for g in groups], len(tests))
    warnings = [r for r in verdict.failures if r.kind is FailureKind.FLAKY]
    out: list[str] = []
    for kind, chosen in (("error", errors), ("warning", warnings)):
        for position, record in enumerate(chosen[:per_type]):
            # a group's count on its first annotation only (later members are annotated as themselves)
            count = counted.get(record.test_id, 1) if kind == "error" and position >= len(head) else 1
            out.append(_record_annotation(kind, record, count, lines_by_id.get(record.test_id), workspace))
        if len(chosen) > per_type:
            left = len(chosen) - per_type
            out.append(
                f"::notice title={escape_property('ci-shards')}::"
                + escape_data(
                    f"{plural(left, 'more ' + kind)} {'is' if left == 1 else 'are'} not annotated "
                    f"(GitHub shows {per_type} per type); see the job summary and the merged failures.jsonl"
                )
            )
    return out


def _never_ran(missing: list[FailureRecord], shared_cause: str) -> FailureRecord:
    """One record for every missing item, with the cause they share (pytest's -x, a crash in a test:
    ``story.missing_causes``), else what they have in common."""
    first = ", ".join(r.test_id for r in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    cause = shared_cause or "never reported by any shard"
    return FailureRecord(
        shard=missing[0].shard,
        test_id=f"{plural(len(missing), 'planned item')} never ran",
        kind=FailureKind.NOT_RUN,
        message=f"{cause}: {first}{more}",
    )


def _record_annotation(kind: str, record: FailureRecord, count: int, test_line: int | None, workspace: str) -> str:
    prefix = "flaky: " if record.kind is FailureKind.FLAKY else ""
    first_line = (message_of(record).splitlines() or [record.kind.value])[0]
    # shard-level records repeat their reason in the text: say it once
    detail = record.text if record.text.strip() and record.text.strip() not in first_line else ""
    times = f" × {plural(count, 'test')}" if count > 1 else ""
    return _annotation(
        kind,
        f"{first_line}\n\n{detail}" if detail else first_line,
        title=f"{prefix}{record.test_id} (shard {record.shard}){times}",
        **_where(record, test_line, workspace),
    )
