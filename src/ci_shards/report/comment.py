"""The PR comment: one per workflow and job, kept up to date through GitHub's REST API.

Deciding is pure (``should_post``, ``find_comment``, the state line); ``CommentClient`` is the only
code that talks HTTP (requests), with retries and backoff on connection errors, 5xx, 429 and
(secondary) rate limits. The token is sent in the ``Authorization`` header and never appears in
any message, exception or ``repr``.

The body's first line is the hidden marker (report.comment_marker); the second a hidden state
line ``<!-- ci-shards-state:<passed|failed> <digest> run=<run_id>.<attempt> -->``: the digest
drives ``on-change``, the run keeps an older run (a late re-run of an old commit) from
overwriting a newer run's comment.

Sources: REST "List issue comments", "Create", "Update", "Delete an issue comment" and pagination
by ``Link`` headers, docs.github.com/en/rest/issues/comments and .../using-pagination-in-the-rest-api;
``retry-after`` / ``x-ratelimit-remaining`` / ``x-ratelimit-reset`` and secondary rate limits,
docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api; body size (65,536
characters), the API's 422 "Body is too long (maximum is 65536 characters)"; when two jobs raced and
both created a comment, the oldest one wins and is the one kept up to date.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Final

from ci_shards.common.console import strip_control
from ci_shards.options.values import CommentMode
from ci_shards.report import md
from ci_shards.report.render import MARKER_PREFIX
from ci_shards.report.verdict import Verdict

if TYPE_CHECKING:
    import requests

COMMENT_LIMIT_CHARS: Final = 65_536
STATE_PREFIX: Final = "<!-- ci-shards-state:"
USER_AGENT: Final = "ci-shards"
_RUN = re.compile(r" run=(\d+)\.(\d+)$")
# the state line as with_state writes it; a comment without one was not written by us
_STATE_LINE = re.compile(r"<!-- ci-shards-state:(?:passed|failed) [0-9A-Za-z]{1,64}(?: run=\d+\.\d+)? -->")
_PASSED_HEADLINE = re.compile(r"^#+ .*ci-shards: passed", re.MULTILINE)


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
    counts: list[object] = [verdict.passed, t.tests, t.failed, t.errors, t.skipped, t.flaky, statuses, failing]
    if t.xfailed or t.xpassed:  # only then: a run without them keeps the state comments already carry
        counts += [t.xfailed, t.xpassed]
    payload = json.dumps(counts)
    digest = hashlib.sha256(payload.encode()).hexdigest()[:16]
    return f"{'passed' if verdict.passed else 'failed'} {digest}"


def with_state(body: str, state: str, *, run_id: str = "", run_attempt: str = "") -> str:
    """The rendered comment with the hidden state line after the marker line."""
    marker, _, rest = body.partition("\n")
    run = f" run={int(run_id)}.{int(run_attempt or 1)}" if run_id.isdigit() and (run_attempt or "1").isdigit() else ""
    return f"{marker}\n{STATE_PREFIX}{state}{run} -->\n{rest}"


def _state_line(body: str) -> str:
    for line in body.splitlines()[:3]:
        if line.startswith(STATE_PREFIX) and line.endswith(" -->"):
            return line[len(STATE_PREFIX) : -4]
    return ""


def read_state(body: str) -> str:
    """``<passed|failed> <digest>`` of a comment body ("" when it has none)."""
    return _RUN.sub("", _state_line(body))


def read_run(body: str) -> tuple[int, int]:
    """(run id, attempt) that wrote a comment body; (0, 0) when unknown."""
    match = _RUN.search(_state_line(body))
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def sanitize_body(body: str, marker: str, *, run_id: str = "", run_attempt: str = "") -> str:
    """A body from a file (the fork ``workflow_run`` recipe) is untrusted: control characters
    stripped, mentions defused, our marker only as its first line, capped below GitHub's limit.

    Any state line in it is dropped and a new one computed from the text itself: an attacker's
    ``run=999999999.1`` would otherwise freeze the comment (no later run is "newer"), and a fake
    digest would steer ``on-change``. The run is the one posting (``run_id``/``run_attempt``)."""
    lines = strip_control(body).splitlines()
    rest = [line for line in lines if not line.startswith((MARKER_PREFIX, STATE_PREFIX))]
    text = _fit(md.defuse("\n".join(rest)), COMMENT_LIMIT_CHARS - 300)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    # the outcome word only decides whether on-failure posts; the rendered headline says it
    outcome = "passed" if _PASSED_HEADLINE.search(text) else "failed"
    return with_state(f"{marker}\n{text}", f"{outcome} {digest}", run_id=run_id, run_attempt=run_attempt)


def _fit(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 100] + "\n\n… (cut to fit GitHub's comment size limit)\n"


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


def _new_session() -> requests.Session:
    # imported here, not at module level: every ci-shards command imports this module for its
    # parser, and requests costs ~0.1 s of start-up that only the comment calls need
    import requests  # noqa: PLC0415

    return requests.Session()


@dataclass
class CommentClient:
    """The issue-comment endpoints of one repository, with retries and backoff."""

    api_url: str
    repository: str
    token: str = field(repr=False)
    session: requests.Session = field(default_factory=_new_session)
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
        import requests  # noqa: PLC0415 - see _new_session

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

    def token_login(self) -> str:
        """The token's user (GET /user), "" when the token may not ask (GITHUB_TOKEN, apps)."""
        try:
            data = self.request("GET", f"{self.api_url}/user").json()
        except (GitHubError, ValueError):
            return ""
        login = data.get("login") if isinstance(data, dict) else None
        return login if isinstance(login, str) else ""

    def create_comment(self, pr: int, body: str) -> dict[str, Any]:
        url = f"{self.api_url}/repos/{self.repository}/issues/{pr}/comments"
        data: dict[str, Any] = self.request("POST", url, {"body": body}).json()
        return data

    def delete_comment(self, comment_id: int) -> None:
        self.request("DELETE", f"{self.api_url}/repos/{self.repository}/issues/comments/{comment_id}")

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


def find_comments(comments: Sequence[Mapping[str, Any]], marker: str, *, login: str = "") -> list[Mapping[str, Any]]:
    """Ours, oldest first: written by a bot (``user.type == "Bot"``, as every GITHUB_TOKEN or
    GitHub App comment is) or by ``login`` (the token's own user, when known), whose first line
    is exactly our marker and second line our state line. Anyone can post a comment starting with
    the marker; without the author check we would edit theirs, or read their state line and let it
    suppress or freeze our updates. Text from tests can never be a first line (report.py puts the
    marker there; md.py defuses any copy in the text)."""

    def ours(c: Mapping[str, Any]) -> bool:
        user = c.get("user")
        if not isinstance(user, Mapping):
            return False
        if user.get("type") != "Bot" and not (login and user.get("login") == login):
            return False
        first, _, rest = str(c.get("body", "")).partition("\n")
        second = rest.split("\n", 1)[0]
        return first.strip() == marker and _STATE_LINE.fullmatch(second.strip()) is not None

    return sorted((c for c in comments if ours(c)), key=lambda c: int(c.get("id", 0)))


def marker_by_people(comments: Sequence[Mapping[str, Any]], marker: str) -> bool:
    """Whether a non-bot comment starts with our marker (an impostor, or ours under a personal token)."""
    return any(
        str(c.get("body", "")).split("\n", 1)[0].strip() == marker
        and not (isinstance(c.get("user"), Mapping) and c["user"].get("type") == "Bot")
        for c in comments
    )


def find_comment(comments: Sequence[Mapping[str, Any]], marker: str, *, login: str = "") -> Mapping[str, Any] | None:
    """The comment to keep up to date: the oldest of ours (every racing job agrees on it)."""
    ours = find_comments(comments, marker, login=login)
    return ours[0] if ours else None


def upsert_comment(
    client: CommentClient, pr: int, body: str, *, marker: str, mode: CommentMode, failed: bool
) -> CommentOutcome:
    """List (paginated), then update our comment or create one, as ``mode`` says.

    A run never overwrites a comment written by a newer run (a late re-run of an old commit). Two
    jobs racing to create both create; the second listing then finds both, and the oldest wins:
    it gets the body and the newer duplicates are deleted.
    """
    if mode is CommentMode.OFF:
        return CommentOutcome(CommentAction.SKIPPED, "comment mode is off")
    if len(body) > COMMENT_LIMIT_CHARS:
        head, _, _rest = body.partition("\n")
        second, _, rest = _rest.partition("\n")
        body = f"{head}\n{second}\n{_fit(rest, COMMENT_LIMIT_CHARS - len(head) - len(second) - 200)}"
    try:
        comments = client.list_comments(pr)
        # a personal token's comments are type "User": ask who the token is, but only when a
        # non-bot comment carries the marker (GITHUB_TOKEN cannot call GET /user; it answers 403)
        login = client.token_login() if marker_by_people(comments, marker) else ""
        existing = find_comment(comments, marker, login=login)
        existing_body = str(existing.get("body", "")) if existing is not None else None
        if existing is not None and existing_body is not None and read_run(existing_body) > read_run(body):
            run_id, attempt = read_run(existing_body)
            return CommentOutcome(
                CommentAction.UNCHANGED,
                f"a newer run ({run_id}, attempt {attempt}) already wrote the comment",
                str(existing.get("html_url", "")),
            )
        if not should_post(mode, failed=failed, existing=existing_body, state=read_state(body)):
            if existing is not None:
                return CommentOutcome(
                    CommentAction.UNCHANGED, "the result has not changed", str(existing.get("html_url", ""))
                )
            return CommentOutcome(CommentAction.SKIPPED, f"nothing to report in mode {mode.value}")
        if existing is not None:
            data = client.update_comment(int(existing["id"]), body)
            return CommentOutcome(CommentAction.UPDATED, url=str(data.get("html_url", "")))
        data = client.create_comment(pr, body)
        ours = find_comments(client.list_comments(pr), marker, login=login)
        if len(ours) > 1:  # another job created one at the same time: the oldest wins
            keep = ours[0]
            kept = client.update_comment(int(keep["id"]), body) if int(keep["id"]) != int(data["id"]) else data
            for duplicate in ours[1:]:
                client.delete_comment(int(duplicate["id"]))
            return CommentOutcome(
                CommentAction.UPDATED, "a concurrent duplicate was removed", str(kept.get("html_url", ""))
            )
        return CommentOutcome(CommentAction.CREATED, url=str(data.get("html_url", "")))
    except GitHubError as err:
        if err.status in (401, 403, 404):
            return CommentOutcome(
                CommentAction.FALLBACK,
                f"cannot write the PR comment ({err}); the token is probably read-only (a fork PR or missing "
                "'pull-requests: write'); for fork PRs see the workflow_run recipe in docs/aggregate.md",
            )
        raise
