"""Links to the job log of each shard that did not pass, for the summary and the PR comment.

GitHub names a matrix job after its matrix values ("test (1, 4, 1/4)") or after the workflow's
``name:`` ("shard 1/4"); either way it contains the shard's label ``I/N`` (matrix.py). The jobs
of this run attempt come from ``GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt}/jobs``
(docs.github.com/en/rest/actions/workflow-jobs, paginated by ``Link`` headers), each with its
``html_url``. Without a token, or on any error, every link is the run's page: a link that works
beats none, and the report must never wait on or fail because of this.

Matching is pure (``match_jobs``); only ``list_jobs`` talks HTTP, through comment.CommentClient.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ci_shards.report.comment import CommentClient, GitHubError
from ci_shards.report.github import GitHubContext

MAX_PAGES: Final = 10  # 1,000 jobs: far beyond any matrix (GitHub caps a matrix at 256)


def _label(index: int, total: int) -> re.Pattern[str]:
    # "1/4" but not inside "11/40"
    return re.compile(rf"(?<!\d){index}/{total}(?!\d)")


def match_jobs(jobs: Sequence[Mapping[str, Any]], shards: Sequence[int], total: int) -> dict[int, str]:
    """Shard index → ``html_url`` of the first job whose name holds the shard's label ``I/N``."""
    links: dict[int, str] = {}
    for index in shards:
        label = _label(index, total)
        for job in jobs:
            name, url = job.get("name"), job.get("html_url")
            if isinstance(name, str) and isinstance(url, str) and label.search(name):
                links[index] = url
                break
    return links


def list_jobs(client: CommentClient, run_id: str, attempt: str) -> list[dict[str, Any]]:
    """Every job of one run attempt (all pages)."""
    url: str | None = (
        f"{client.api_url}/repos/{client.repository}/actions/runs/{run_id}/attempts/{attempt or 1}/jobs?per_page=100"
    )
    jobs: list[dict[str, Any]] = []
    for _page in range(MAX_PAGES):
        if not url:
            break
        response = client.request("GET", url)
        data = response.json()
        page = data.get("jobs") if isinstance(data, dict) else None
        if not isinstance(page, list):
            msg = "GET jobs: unexpected answer"
            raise GitHubError(msg)
        jobs.extend(job for job in page if isinstance(job, dict))
        url = response.links.get("next", {}).get("url")
    return jobs


def job_links(
    ctx: GitHubContext, shards: Sequence[int], total: int, *, client: CommentClient | None = None
) -> dict[int, str]:
    """A link per shard in ``shards``: its job's log where the API names it, else the run's page
    ({} when not on GitHub Actions)."""
    fallback = ctx.run_url
    if not shards or not fallback:
        return {}
    if not (ctx.token and ctx.run_id.isdigit()):
        return dict.fromkeys(shards, fallback)
    if client is None:
        # one quick retry: a link is a convenience, never worth a minute of backoff
        client = CommentClient(
            api_url=ctx.api_url, repository=ctx.repository, token=ctx.token, retries=1, max_backoff=2.0, timeout=10.0
        )
    attempt = ctx.run_attempt if ctx.run_attempt.isdigit() else "1"
    try:
        matched = match_jobs(list_jobs(client, ctx.run_id, attempt), shards, total)
    except (GitHubError, ValueError):
        matched = {}
    return {index: matched.get(index, fallback) for index in shards}
