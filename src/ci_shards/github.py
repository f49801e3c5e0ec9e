"""GitHub: the environment of a run, workflow-command annotations, and the PR comment upsert.

Deciding is pure (``GitHubContext.from_env``, ``annotation_lines``, ``plan_comment``); only
``CommentClient`` talks HTTP (requests), with retries on 5xx / 429 / secondary rate limits.
The token is sent in a header and never appears in any message, exception or log line.

Sources: workflow commands and their escaping, actions/toolkit ``command.ts``; annotation caps
(10 per type per step), notes/gha.md §4.4; comment size (65,536 characters) notes/gha.md §4.3;
REST "List issue comments" / "Create" / "Update an issue comment" and pagination by ``Link``
headers, docs.github.com/en/rest/issues/comments and .../using-pagination-in-the-rest-api;
rate limits and ``retry-after`` / ``x-ratelimit-reset``, docs.github.com/en/rest/using-the-rest-api/
rate-limits-for-the-rest-api; fork PRs get a read-only token, notes/gha.md §4.1.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Final

import requests

from ci_shards import md
from ci_shards.aggregate import Verdict
from ci_shards.console import escape_data, escape_property, strip_control
from ci_shards.errors import InputError
from ci_shards.model import FailureKind, FailureRecord
from ci_shards.report import MARKER_PREFIX

ANNOTATIONS_PER_TYPE: Final = 10  # GitHub shows 10 per type per step; the rest are silently dropped
COMMENT_LIMIT_CHARS: Final = 65_536
STATE_PREFIX: Final = "<!-- ci-shards-state:"
DEFAULT_API_URL: Final = "https://api.github.com"
USER_AGENT: Final = "ci-shards"


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
        """A ``pull_request`` from another repository: its GITHUB_TOKEN is read-only (notes/gha.md §1.1)."""
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


def annotation_lines(verdict: Verdict, *, per_type: int = ANNOTATIONS_PER_TYPE) -> list[str]:
    """At most ``per_type`` ``::error``s and ``::warning``s, the most useful first, then one ``::notice``
    per type saying how many more there are and where to find them."""
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
                test_id=f"{len(missing)} planned items never ran",
                kind=FailureKind.NOT_RUN,
                message=f"never reported by any shard: {first}{more}",
            ),
        )
    for kind, records in (("error", errors), ("warning", warnings)):
        for record in records[:per_type]:
            prefix = "flaky: " if record.kind is FailureKind.FLAKY else ""
            first_line = (record.message.strip().splitlines() or [record.kind.value])[0]
            out.append(
                _annotation(
                    kind,
                    f"{first_line}\n\n{record.text}" if record.text else first_line,
                    title=f"{prefix}{record.test_id} (shard {record.shard})",
                    file=record.file if record.kind is not FailureKind.NOT_RUN else None,
                    line=lines_by_id.get(record.test_id),
                )
            )
        if len(records) > per_type:
            out.append(
                f"::notice title={escape_property('ci-shards')}::"
                + escape_data(
                    f"{len(records) - per_type} more {kind}s are not annotated (GitHub shows {per_type} per type); "
                    "see the job summary and the merged failures.jsonl"
                )
            )
    return out


# --------------------------------------------------------------------------------------------
# the PR comment


class CommentMode(str, Enum):
    ALWAYS = "always"  # create or update on every run
    ON_FAILURE = "on-failure"  # create only when the run failed; an existing comment is always updated
    ON_CHANGE = "on-change"  # create or update only when the result differs from the comment's
    OFF = "off"


class CommentAction(str, Enum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    SKIPPED = "skipped"
    FALLBACK = "fallback"  # no write access (fork PR, read-only token): the job summary carries it


@dataclass(frozen=True)
class CommentOutcome:
    action: CommentAction
    detail: str = ""
    url: str = ""


def result_state(verdict: Verdict) -> str:
    """A short digest of what the comment reports (not timings), for ``on-change``."""
    t = verdict.totals
    failing = sorted(r.test_id for r in verdict.failures)
    statuses = [s.status.value for s in verdict.shards]
    payload = json.dumps([verdict.passed, t.tests, t.failed, t.errors, t.skipped, t.flaky, statuses, failing])
    digest = hashlib.sha256(payload.encode()).hexdigest()[:16]
    return f"{'passed' if verdict.passed else 'failed'} {digest}"


def with_state(body: str, state: str) -> str:
    """The rendered comment with a hidden state line after the marker line."""
    marker, _, rest = body.partition("\n")
    return f"{marker}\n{STATE_PREFIX}{state} -->\n{rest}"


def read_state(body: str) -> str:
    for line in body.splitlines()[:3]:
        if line.startswith(STATE_PREFIX) and line.endswith(" -->"):
            return line[len(STATE_PREFIX) : -4]
    return ""


def sanitize_body(body: str, marker: str) -> str:
    """A body from a file (the fork ``workflow_run`` recipe) is untrusted: control characters
    stripped, mentions defused, our marker only as its first line, capped below GitHub's limit."""
    lines = strip_control(body).splitlines()
    kept = [line for line in lines if not line.startswith(MARKER_PREFIX)]
    state = [line for line in kept if line.startswith(STATE_PREFIX)][:1]
    rest = [line for line in kept if not line.startswith(STATE_PREFIX)]
    text = "\n".join(rest)
    text = md.defuse(text)
    text = "\n".join([marker, *state, text])
    if len(text) > COMMENT_LIMIT_CHARS - 100:
        text = text[: COMMENT_LIMIT_CHARS - 200] + "\n\n… (cut to fit GitHub's comment size limit)\n"
    return text


def should_post(mode: CommentMode, *, failed: bool, existing: str | None, state: str) -> bool:
    """Whether to write the comment at all (pure; ``existing`` is the current comment's body)."""
    if mode is CommentMode.OFF:
        return False
    if mode is CommentMode.ON_FAILURE:
        return failed or existing is not None
    if mode is CommentMode.ON_CHANGE:
        return existing is None or read_state(existing) != state
    return True


class GitHubError(Exception):
    """An API call that failed after retries (the message never contains the token)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class CommentClient:
    """The issue-comment endpoints of one repository, with retries and backoff."""

    api_url: str
    repository: str
    token: str = field(repr=False)
    session: requests.Session = field(default_factory=requests.Session)
    sleep: Callable[[float], None] = time.sleep
    retries: int = 5
    timeout: float = 30.0
    max_backoff: float = 60.0

    def _headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": USER_AGENT,
        }

    def _wait(self, response: requests.Response | None, attempt: int) -> float:
        if response is not None:
            retry_after = response.headers.get("retry-after")
            if retry_after and retry_after.isdigit():
                return min(float(retry_after), self.max_backoff)
            if response.headers.get("x-ratelimit-remaining") == "0":
                reset = response.headers.get("x-ratelimit-reset", "")
                if reset.isdigit():
                    return min(max(float(reset) - time.time(), 1.0), self.max_backoff)
        return min(2.0**attempt, self.max_backoff)

    @staticmethod
    def _is_rate_limited(response: requests.Response) -> bool:
        if response.status_code == 429:
            return True
        if response.status_code != 403:
            return False
        if response.headers.get("retry-after") or response.headers.get("x-ratelimit-remaining") == "0":
            return True
        return "rate limit" in response.text[:2000].lower()

    def request(self, method: str, url: str, payload: Mapping[str, Any] | None = None) -> requests.Response:
        """One call with retries on connection errors, 5xx, 429 and (secondary) rate limits."""
        path = url.removeprefix(self.api_url)
        last = ""
        for attempt in range(self.retries + 1):
            response: requests.Response | None = None
            try:
                response = self.session.request(
                    method, url, headers=self._headers(), json=payload, timeout=self.timeout
                )
            except requests.RequestException as err:
                last = f"{type(err).__name__}"  # not str(err): keep the message free of anything sent
            else:
                if response.status_code < 400:
                    return response
                if not (response.status_code >= 500 or self._is_rate_limited(response)):
                    msg = f"{method} {path}: HTTP {response.status_code} {_api_message(response)}"
                    raise GitHubError(
                        msg,
                        response.status_code,
                    )
                last = f"HTTP {response.status_code} {_api_message(response)}"
            if attempt < self.retries:
                self.sleep(self._wait(response, attempt))
        msg = f"{method} {path}: gave up after {self.retries + 1} attempts ({last})"
        raise GitHubError(msg)

    def list_comments(self, pr: int) -> list[dict[str, Any]]:
        url: str | None = f"{self.api_url}/repos/{self.repository}/issues/{pr}/comments?per_page=100"
        comments: list[dict[str, Any]] = []
        pages = 0
        while url and pages < 100:  # 10,000 comments is far beyond any real PR
            response = self.request("GET", url)
            data = response.json()
            if not isinstance(data, list):
                msg = f"GET comments: unexpected answer {type(data).__name__}"
                raise GitHubError(msg)
            comments.extend(c for c in data if isinstance(c, dict))
            url = response.links.get("next", {}).get("url")
            pages += 1
        return comments

    def create_comment(self, pr: int, body: str) -> dict[str, Any]:
        url = f"{self.api_url}/repos/{self.repository}/issues/{pr}/comments"
        data: dict[str, Any] = self.request("POST", url, {"body": body}).json()
        return data

    def update_comment(self, comment_id: int, body: str) -> dict[str, Any]:
        url = f"{self.api_url}/repos/{self.repository}/issues/comments/{comment_id}"
        data: dict[str, Any] = self.request("PATCH", url, {"body": body}).json()
        return data


def _api_message(response: requests.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return ""
    message = data.get("message", "") if isinstance(data, dict) else ""
    return f"({md.cap(' '.join(str(message).split()), 200)})" if message else ""


def find_comment(comments: Sequence[Mapping[str, Any]], marker: str) -> Mapping[str, Any] | None:
    """Our comment: the most recently updated one whose FIRST line is exactly our marker. Text from
    tests can never be a first line (report.py puts the marker there, md.py defuses copies)."""
    ours = [c for c in comments if str(c.get("body", "")).split("\n", 1)[0].strip() == marker]
    return max(ours, key=lambda c: (str(c.get("updated_at", "")), int(c.get("id", 0))), default=None)


def upsert_comment(
    client: CommentClient, pr: int, body: str, *, marker: str, mode: CommentMode, failed: bool
) -> CommentOutcome:
    """List (paginated), then update our comment or create one, as ``mode`` says."""
    if mode is CommentMode.OFF:
        return CommentOutcome(CommentAction.SKIPPED, "comment mode is off")
    if len(body) > COMMENT_LIMIT_CHARS:
        body = sanitize_body(body, marker)
    try:
        existing = find_comment(client.list_comments(pr), marker)
        state = read_state(body)
        existing_body = str(existing.get("body", "")) if existing is not None else None
        if not should_post(mode, failed=failed, existing=existing_body, state=state):
            if existing is not None:
                return CommentOutcome(CommentAction.UNCHANGED, "the result has not changed", str(existing["html_url"]))
            return CommentOutcome(CommentAction.SKIPPED, f"nothing to report in mode {mode.value}")
        if existing is not None:
            data = client.update_comment(int(existing["id"]), body)
            return CommentOutcome(CommentAction.UPDATED, url=str(data.get("html_url", "")))
        data = client.create_comment(pr, body)
        return CommentOutcome(CommentAction.CREATED, url=str(data.get("html_url", "")))
    except GitHubError as err:
        if err.status in (401, 403, 404):
            return CommentOutcome(
                CommentAction.FALLBACK,
                f"cannot write the PR comment ({err}); the token is probably read-only (a fork PR or missing "
                "'pull-requests: write'), so the results are in the job summary only. For fork PRs see the "
                "workflow_run recipe in docs/aggregate.md",
            )
        raise
