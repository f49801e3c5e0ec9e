"""pytest plugin: runs exactly one shard's node ids and records what happened to each of them.

Loaded through the ``pytest11`` entry point (and by ``ci-shards run --pytest`` with
``-p ci_shards.pytest_plugin``); it does nothing unless ``--ci-shards-plan``/``--ci-shards-select``
or ``--ci-shards-report`` is given.

- Selection happens at collection time from plan.json (or an id file for re-runs), so there is no
  argument-length limit and pytest collects only the files it is given.
- Every event is appended to the report as one JSON line and flushed at once, so a run killed at
  the deadline still tells which tests finished and which one was in flight.
- Planned ids that were not collected are reported (a deleted or renamed test must not vanish);
  planned ids that another filter (``-k``, ``-m``) deselected are reported as such.

Ids are written the way the plan names them: the test file's path relative to the directory pytest
was started in, plus the node id's ``::`` suffix, so they match whatever rootdir pytest picks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

import pytest

MAX_TEXT: int = 16 * 1024
PLUGIN_NAME = "ci-shards-shard"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ci-shards", "ci-shards: run one shard of a plan")
    group.addoption("--ci-shards-plan", metavar="PATH", default=None, help="plan.json to select from (default: none)")
    group.addoption(
        "--ci-shards-shard", metavar="I/N", default=None, help="the shard of the plan to run (default: none)"
    )
    group.addoption(
        "--ci-shards-select",
        metavar="PATH",
        default=None,
        help="file with one node id per line to run instead of a plan shard (default: none)",
    )
    group.addoption(
        "--ci-shards-report", metavar="PATH", default=None, help="append JSON-lines test events here (default: none)"
    )


def _planned_ids(config: pytest.Config) -> list[str] | None:
    select = config.getoption("ci_shards_select")
    if select:
        return [line for line in Path(select).read_text(encoding="utf-8").splitlines() if line.strip()]
    plan_path = config.getoption("ci_shards_plan")
    if not plan_path:
        return None
    from ci_shards.model import Plan, parse_shard_spec  # noqa: PLC0415 (only when active)

    spec = config.getoption("ci_shards_shard")
    if not spec:
        msg = "--ci-shards-plan needs --ci-shards-shard I/N"
        raise pytest.UsageError(msg)
    try:
        index, total = parse_shard_spec(spec)
        plan = Plan.from_json(json.loads(Path(plan_path).read_text(encoding="utf-8")))
    except (OSError, ValueError) as err:
        msg = f"{plan_path}: {err}"
        raise pytest.UsageError(msg) from None
    if plan.total != total:
        msg = f"{plan_path}: the plan has {plan.total} shards, not {total}"
        raise pytest.UsageError(msg)
    return list(plan.shard(index).items)


class _ShardState:
    def __init__(self, config: pytest.Config, planned: list[str] | None, report: IO[str] | None) -> None:
        self.config = config
        self.planned = planned
        self.planned_set = set(planned or ())
        self.report = report
        self.keys: dict[str, str] = {}  # nodeid -> plan-style id
        self.selected: list[str] = []
        self.skipped_collectors: dict[str, str] = {}  # plan-style prefix -> reason
        self.collected_files: set[str] = set()  # plan-style paths of modules collected without error
        self.phases: dict[str, dict[str, Any]] = {}

    def emit(self, event: dict[str, Any]) -> None:
        if self.report is not None:
            self.report.write(json.dumps(event, ensure_ascii=False) + "\n")
            self.report.flush()

    def key(self, nodeid: str, path: Path | None) -> str:
        if nodeid in self.keys:
            return self.keys[nodeid]
        key = nodeid
        if path is not None:
            rel = Path(os.path.relpath(path, self.config.invocation_params.dir)).as_posix()
            suffix = nodeid.split("::", 1)[1] if "::" in nodeid else ""
            key = f"{rel}::{suffix}" if suffix else rel
        self.keys[nodeid] = key
        return key

    def id_of(self, nodeid: str) -> str:
        """The plan-style id of a test this process may not have collected itself (pytest-xdist's
        controller only sees node ids, which are relative to rootdir)."""
        if nodeid in self.keys:
            return self.keys[nodeid]
        return self.key(nodeid, self.config.rootpath / nodeid.split("::", 1)[0])

    def matches(self, key: str, nodeid: str) -> str | None:
        """The planned id (exact, or a file/class prefix) that covers this test, if any."""
        for candidate in (key, nodeid):
            parts = candidate.split("::")
            for end in range(len(parts), 0, -1):
                prefix = "::".join(parts[:end])
                if prefix in self.planned_set:
                    return prefix
        return None

    # ---- hooks (this object is registered as a plugin only when the options are given)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.report is not None:
            self.report.close()
            self.report = None

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # a collector's node id is relative to rootdir, which need not be the directory pytest ran in
        path = self.config.rootpath / report.nodeid.split("::", 1)[0] if report.nodeid else None
        key = self.key(report.nodeid, path) if report.nodeid else "<collection>"
        if report.failed:
            self.emit(
                {
                    "event": "collect-error",
                    "id": key,
                    "message": "collection failure",
                    "text": _text(report.longreprtext),
                }
            )
        elif report.skipped and report.nodeid:
            self.skipped_collectors[key] = _reason(report.longrepr)
        elif report.nodeid and "::" not in report.nodeid:
            self.collected_files.add(key)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if self.planned is None:
            for item in items:
                self.key(item.nodeid, item.path)
            return
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            (keep if self.matches(self.key(item.nodeid, item.path), item.nodeid) else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep
        self.selected = [self.key(i.nodeid, i.path) for i in keep]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        final = [self.key(i.nodeid, i.path) for i in session.items]
        event: dict[str, Any] = {"event": "collected", "ids": final}
        if self.planned is not None:
            final_set = set(final)
            event["deselected"] = [k for k in self.selected if k not in final_set]
            covered = {self.matches(k, k) for k in self.selected}
            missing = [p for p in self.planned if p not in covered]
            skipped: dict[str, str] = {}
            for planned_id in missing:
                for prefix, reason in self.skipped_collectors.items():
                    if planned_id == prefix or planned_id.startswith(prefix + "::"):
                        skipped[planned_id] = reason
                if planned_id in self.collected_files and planned_id not in skipped:
                    # a planned file (a discovery plan names files found on disk) that pytest
                    # collected without error and that holds no test: nothing to run, nothing lost
                    skipped[planned_id] = "the file holds no tests"
            event["skipped_at_collection"] = skipped
            event["not_collected"] = [p for p in missing if p not in skipped]
        self.emit(event)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.emit({"event": "start", "id": self.id_of(nodeid)})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = self.phases.setdefault(
            report.nodeid, {"duration": 0.0, "outcome": "passed", "message": "", "text": ""}
        )
        record["duration"] += report.duration
        if report.failed:
            outcome = "failed" if report.when == "call" else "error"
            if record["outcome"] not in ("failed", "error"):
                crash = getattr(report.longrepr, "reprcrash", None)
                lines = report.longreprtext.strip().splitlines()
                message = str(getattr(crash, "message", "") or (lines[-1] if lines else ""))
                if report.when != "call":
                    message = f"failed on {report.when}: {message}"
                record.update(outcome=outcome, message=message[:4096], text=_text(report.longreprtext))
        elif report.skipped and record["outcome"] == "passed":
            reason = getattr(report, "wasxfail", "") or _reason(report.longrepr)
            record.update(outcome="skipped", message=str(reason)[:4096])
        if report.when == "teardown":
            self.phases.pop(report.nodeid, None)
            self.emit(
                {
                    "event": "result",
                    "id": self.id_of(report.nodeid),
                    "outcome": record["outcome"],
                    "duration": round(record["duration"], 6),
                    "message": record["message"],
                    "text": record["text"],
                    # pytest's locations are 0-based; CaseResult.line and annotations are 1-based
                    "line": None if report.location[1] is None else report.location[1] + 1,
                }
            )

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.emit({"event": "finish", "exitstatus": int(exitstatus)})


def pytest_configure(config: pytest.Config) -> None:
    planned = _planned_ids(config)
    report_path = config.getoption("ci_shards_report")
    if planned is None and not report_path:
        return  # inert
    if hasattr(config, "workerinput"):
        # a pytest-xdist worker: it must select the same tests as the controller, but the controller
        # receives every worker's reports and writes the events, so a worker writes none
        report_path = None
    report = open(report_path, "a", encoding="utf-8") if report_path else None  # noqa: SIM115 (closed at unconfigure)
    config.pluginmanager.register(_ShardState(config, planned, report), PLUGIN_NAME)


def _text(value: object) -> str:
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT // 2] + "\n...\n" + text[-MAX_TEXT // 2 :]


def _reason(longrepr: object) -> str:
    return str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr or "")
