"""A real HTTP server on 127.0.0.1 implementing GitHub's issue-comment endpoints and the jobs of a
workflow run attempt, for the tests.

List (paginated with Link headers, ``page_size`` per page whatever ``per_page`` asks), create,
update, delete; ``script`` holds canned answers (status, headers, body) served first, in order, to
simulate 403 / 429 / 500 and secondary rate limits. Every request is logged.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


@dataclass
class FakeGitHub:
    page_size: int = 3
    comments: list[dict[str, Any]] = field(default_factory=list)
    script: list[tuple[int, dict[str, str], Any]] = field(default_factory=list)
    log: list[tuple[str, str, dict[str, str], Any]] = field(default_factory=list)
    next_id: int = 1000
    clock: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""
    race: str | None = None  # a body another job "creates" just before our POST lands
    token_user: str | None = None  # GET /user answers this login; None: 403 as for GITHUB_TOKEN
    jobs: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)  # (run id, attempt) → jobs

    def add(self, body: str, login: str = "github-actions[bot]") -> dict[str, Any]:
        self.clock += 1
        self.next_id += 1
        comment = {
            "id": self.next_id,
            "body": body,
            "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"},
            "updated_at": f"2026-11-30T00:00:{self.clock:02d}Z",
            "html_url": f"https://github.example/o/r/pull/7#issuecomment-{self.next_id}",
        }
        self.comments.append(comment)
        return comment


def _handler(state: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            payload = json.loads(self.rfile.read(length)) if length else None
            with state.lock:
                state.log.append((method, self.path, dict(self.headers), payload))
                if state.script:
                    status, headers, body = state.script.pop(0)
                    self._send(status, body, headers)
                    return
                self._route(method, payload)

        def _route(self, method: str, payload: Any) -> None:
            url = urlparse(self.path)
            listing = re.fullmatch(r"/api/v3/repos/([^/]+/[^/]+)/issues/(\d+)/comments", url.path)
            single = re.fullmatch(r"/api/v3/repos/([^/]+/[^/]+)/issues/comments/(\d+)", url.path)
            jobs = re.fullmatch(r"/api/v3/repos/[^/]+/[^/]+/actions/runs/(\d+)/attempts/(\d+)/jobs", url.path)
            if jobs and method == "GET":
                self._jobs(state.jobs.get((jobs.group(1), jobs.group(2))), url)
                return
            if listing and method == "GET":
                page = int(parse_qs(url.query).get("page", ["1"])[0])
                start = (page - 1) * state.page_size
                chunk = state.comments[start : start + state.page_size]
                headers = {}
                if start + state.page_size < len(state.comments):
                    base = f"{state.url}{url.path}"
                    headers["Link"] = f'<{base}?per_page=100&page={page + 1}>; rel="next", <{base}?page=1>; rel="first"'
                self._send(200, chunk, headers)
            elif url.path == "/api/v3/user" and method == "GET":
                if state.token_user is None:
                    self._send(403, {"message": "Resource not accessible by integration"})
                else:
                    self._send(200, {"login": state.token_user, "type": "User"})
            elif listing and method == "POST":
                if state.race is not None:
                    state.add(state.race)
                    state.race = None
                self._send(201, state.add(payload["body"], login=state.token_user or "github-actions[bot]"))
            elif single and method == "PATCH":
                for comment in state.comments:
                    if comment["id"] == int(single.group(2)):
                        state.clock += 1
                        comment["body"] = payload["body"]
                        comment["updated_at"] = f"2026-11-30T00:01:{state.clock:02d}Z"
                        self._send(200, comment)
                        return
                self._send(404, {"message": "Not Found"})
            elif single and method == "DELETE":
                before = len(state.comments)
                state.comments[:] = [c for c in state.comments if c["id"] != int(single.group(2))]
                if len(state.comments) == before:
                    self._send(404, {"message": "Not Found"})
                else:
                    self.send_response(204)
                    self.end_headers()
            else:
                self._send(404, {"message": "Not Found"})

        def _jobs(self, jobs: list[dict[str, Any]] | None, url: Any) -> None:
            """List jobs for a workflow run attempt: ``{"total_count", "jobs"}``, paginated like comments."""
            if jobs is None:
                self._send(404, {"message": "Not Found"})
                return
            page = int(parse_qs(url.query).get("page", ["1"])[0])
            start = (page - 1) * state.page_size
            headers = {}
            if start + state.page_size < len(jobs):
                headers["Link"] = f'<{state.url}{url.path}?per_page=100&page={page + 1}>; rel="next"'
            self._send(200, {"total_count": len(jobs), "jobs": jobs[start : start + state.page_size]}, headers)

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def do_PATCH(self) -> None:
            self._handle("PATCH")

        def do_DELETE(self) -> None:
            self._handle("DELETE")

    return Handler


class ServerThread:
    def __init__(self, state: FakeGitHub) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
        host, port = self.server.server_address[:2]
        state.url = f"http://{host}:{port}"
        self.api_url = f"{state.url}/api/v3"  # a GitHub Enterprise-style GITHUB_API_URL
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
