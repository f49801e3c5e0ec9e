"""pytest plugin: runs exactly one shard's node ids and records what happened to each of them.

Loaded through the ``pytest11`` entry point (and by ``ci-shards run --pytest`` with
``-p ci_shards.pytest_plugin``); it does nothing unless ``--ci-shards-plan``/``--ci-shards-select``
or ``--ci-shards-report`` is given.

- Selection happens at collection time from plan.json (or an id file for re-runs), so there is no
  argument-length limit and pytest collects only the files it is given. Tests the plan does not
  know are never dropped: each runs in exactly one shard (``model.ShardOwnership``), the one that
  owns its file, or for a file no shard owns the plan's ``unowned_shard`` (which the runner gives
  the run's own paths to collect).
- Every event is appended to the report as one JSON line and flushed at once, so a run killed at
  the deadline still tells which tests finished and which one was in flight.
- Planned ids that were not collected are reported (a deleted or renamed test must not vanish);
  planned ids that another filter (``-k``, ``-m``) deselected are reported as such.

Ids are written the way the plan names them: the test file's path relative to the directory pytest
was started in (or to ``--ci-shards-ids-root``, a pytest plan's rootdir), plus the node id's ``::``
suffix, so they match whatever rootdir pytest picks. ``--ci-shards-args`` makes the shard's files the
only collection arguments (what else was given is dropped and reported).

``--ci-shards-collect-to`` is ``ci-shards plan --pytest``'s side: it records every collected node id
in-process (ci_shards.plan.pytest_collect reads it), never through pytest's text output.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO, Any

import pytest
from _pytest.doctest import DoctestTextfile
from _pytest.junitxml import mangle_test_address  # pytest's own, so the names match its --junitxml
from _pytest.pathlib import fnmatch_ex
from _pytest.python import path_matches_patterns  # pytest's own python_files matching

from ci_shards import outfile
from ci_shards.model import Plan, ShardOwnership, item_file, owning_item, parse_shard_spec

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
    _add_collection_options(group)


def _add_collection_options(group: pytest.OptionGroup) -> None:
    """Options of ``ci-shards plan --pytest`` (recording) and of a run whose plan holds rootdir-relative ids."""
    group.addoption(
        "--ci-shards-collect-to",
        metavar="PATH",
        default=None,
        help="write every collected node id, rootdir and collection error here as JSON (default: none)",
    )
    group.addoption(
        "--ci-shards-args",
        metavar="PATH",
        default=None,
        help="file with one path per line: the only arguments collected; other positional arguments and"
        " --pyargs are dropped and reported (default: none)",
    )
    group.addoption(
        "--ci-shards-ids-root",
        metavar="DIR",
        default=None,
        help="the folder the planned ids are relative to (default: the folder pytest was started in)",
    )


@dataclass(frozen=True)
class _Selection:
    """What this pytest process runs.

    With a plan: every collected test that ``ShardOwnership`` gives to shard ``index`` (its planned
    items, tests the plan does not know in the files it owns, and, in the plan's ``unowned_shard``,
    files no shard owns), narrowed to the files of ``batch`` when the runner split the shard into
    batches. With only an id file (re-runs): the tests those ids cover. ``planned`` is what the
    process answers for: ids reported as not collected when nothing covers them.
    """

    planned: list[str]
    ownership: ShardOwnership | None = None
    index: int = 0
    batch: frozenset[str] | None = None  # files of this batch (None: every file of the shard)
    own_files: frozenset[str] = frozenset()

    def keeps(self, key: str, nodeid: str) -> bool:
        if self.ownership is None:
            return any(owning_item(i, self.planned_set) is not None for i in (key, nodeid))
        own = self.ownership
        shard = own.planned_shard(key)
        if shard is None:
            shard = own.planned_shard(nodeid)
        if shard is None:
            shard = own.unplanned_shard(key)
        return shard == self.index and self._in_batch(item_file(key))

    def _in_batch(self, file: str) -> bool:
        # a batch runs its own files; a file no shard owns is collected only by the batch given the roots
        return self.batch is None or file in self.batch or file not in self.own_files

    def skips_file(self, file: str) -> bool:
        """A planned file this process runs nothing of: another shard's, or another batch's. The
        unowned shard collects the run's roots, and must not import (nor fail on) those files."""
        if self.ownership is None or file not in self.ownership.file_shard:
            return False
        return file not in self.own_files or not self._in_batch(file)

    @cached_property
    def planned_set(self) -> frozenset[str]:
        return frozenset(self.planned)


def _read_ids(path: str) -> list[str]:
    return [line for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def _selection(config: pytest.Config) -> _Selection | None:
    select = config.getoption("ci_shards_select")
    plan_path = config.getoption("ci_shards_plan")
    if not plan_path:
        return _Selection(_read_ids(select)) if select else None
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
    items = list(plan.shard(index).items)
    own_files = frozenset(item_file(i) for i in items)
    if not select:
        return _Selection(items, ownership=plan.ownership(), index=index, own_files=own_files)
    batch_items = _read_ids(select)
    batch = frozenset(item_file(i) for i in batch_items)
    return _Selection(batch_items, ownership=plan.ownership(), index=index, batch=batch, own_files=own_files)


class _ShardState:
    def __init__(self, config: pytest.Config, selection: _Selection | None, report: IO[str] | None) -> None:
        self.config = config
        self.selection = selection
        self.planned = None if selection is None else selection.planned
        self.planned_set = set(self.planned or ())
        self.report = report
        self.keys: dict[str, str] = {}  # nodeid -> plan-style id
        self.selected: list[str] = []
        self.skipped_collectors: dict[str, str] = {}  # plan-style prefix -> reason
        self.collected_files: set[str] = set()  # plan-style paths of modules collected without error
        self.phases: dict[str, dict[str, Any]] = {}
        self.ids_root = Path(config.getoption("ci_shards_ids_root") or config.invocation_params.dir)

    def emit(self, event: dict[str, Any]) -> None:
        if self.report is not None:
            self.report.write(json.dumps(event, ensure_ascii=False) + "\n")
            self.report.flush()

    def key(self, nodeid: str, path: Path | None) -> str:
        if nodeid in self.keys:
            return self.keys[nodeid]
        key = nodeid
        if path is not None:
            rel = Path(os.path.relpath(path, self.ids_root)).as_posix()
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

    # ---- hooks (this object is registered as a plugin only when the options are given)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.report is not None:
            self.report.close()
            self.report = None

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        if self.selection is None:
            return None
        file = Path(os.path.relpath(collection_path, self.ids_root)).as_posix()
        return True if self.selection.skips_file(file) else None  # None: the other hooks decide

    @pytest.hookimpl(wrapper=True)
    def pytest_collect_file(
        self, file_path: Path, parent: pytest.Collector
    ) -> Generator[None, list[pytest.Collector], list[pytest.Collector]]:
        """This process's files are collected as a walk of their folder collects them.

        - A planned file no collector takes (``t.py``, which ``python_files`` would not find in a
          folder): named on the command line pytest collects it, but the unowned shard also gives
          pytest the run's roots, and a file inside a given folder is then met through the folder.
          It is collected as a module, once.
        - A planned file the project's own rules leave out of its folder's walk (``collect_ignore``
          in a conftest, ``--ignore``/``--ignore-glob``): pytest collects a file named on the
          command line anyway, and a discovery plan, which reads no conftest, may name it. It is
          not collected, and reported skipped with the reason, as the project's own run skips it.
        - A file the shard names (``--ci-shards-args``) is collected by more collectors than the same
          file in a folder: any ``.py`` as a test module, any ``.txt``/``.rst`` as a doctest (and the
          ``t.py`` module above). When a conftest's collector also claims it (Pygments collects
          ``snippets/*.txt`` and ``examplefiles/*/*.py`` as lexer tests), those are dropped: the
          project's own run has no such tests (a data file imported as a module, a failing doctest).
        """
        collectors = yield
        if self.selection is None:
            return collectors
        file = Path(os.path.relpath(file_path, self.ids_root)).as_posix()
        own = file in self.selection.own_files
        config = parent.config
        if own and parent.session.isinitpath(file_path) and _left_out_by_the_project(file_path, config):
            return []  # reported skipped, with the reason, at collection_finish
        if len(collectors) == 1 or (not collectors and file_path.suffix != ".py"):
            return collectors
        if not collectors:
            return (
                [pytest.Module.from_parent(parent, path=file_path)]
                if own and _named_only_module(file_path, config)
                else []
            )
        if not own and not parent.session.isinitpath(file_path):
            return collectors
        claimed = [c for c in collectors if not _collected_for_its_name(c, file_path, config)]
        return claimed or collectors

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
        if self.selection is None:
            for item in items:
                self.key(item.nodeid, item.path)
            return
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            (keep if self.selection.keeps(self.key(item.nodeid, item.path), item.nodeid) else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep
        self.selected = [self.key(i.nodeid, i.path) for i in keep]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        final = [self.key(i.nodeid, i.path) for i in session.items]
        event: dict[str, Any] = {"event": "collected", "ids": final}
        if self.planned is not None:
            final_set = set(final)
            # planned tests another filter (-k, -m) took away; unplanned ones were never promised
            event["deselected"] = [
                k for k in self.selected if k not in final_set and owning_item(k, self.planned_set) is not None
            ]
            covered = {owning_item(k, self.planned_set) for k in self.selected}
            missing = [p for p in self.planned if p not in covered]
            skipped: dict[str, str] = {}
            for planned_id in missing:
                for prefix, reason in self.skipped_collectors.items():
                    if planned_id == prefix or planned_id.startswith(prefix + "::"):
                        skipped[planned_id] = reason
                if planned_id not in skipped and _left_out_by_the_project(
                    self.ids_root / item_file(planned_id), self.config
                ):
                    skipped[planned_id] = IGNORED_REASON
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
            if hasattr(report, "wasxfail"):
                record["xfail"] = "xfailed"
        elif report.passed and report.when == "call" and hasattr(report, "wasxfail"):
            record["xfail"] = "xpassed"  # a non-strict xfail that passed (strict ones fail)
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
                    "xfail": record.get("xfail", ""),
                    "junit": _junit_identity(report),
                }
            )

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.emit({"event": "finish", "exitstatus": int(exitstatus)})


IGNORED_REASON = "left out by the project's collect_ignore or --ignore (its own run does not collect it)"


def _left_out_by_the_project(path: Path, config: pytest.Config) -> bool:
    """Would a walk of the file's folder leave it out? pytest consults ``pytest_ignore_collect``
    (conftests' ``collect_ignore``/``collect_ignore_glob``, ``--ignore``, plugins) only while walking."""
    return bool(config.hook.pytest_ignore_collect(collection_path=path, config=config))


def _named_only_module(path: Path, config: pytest.Config) -> bool:
    """A ``.py`` file a folder's walk does not collect as a test module (its name does not match)."""
    return not path_matches_patterns(path, [*config.getini("python_files"), "__init__.py"])


def _collected_for_its_name(collector: pytest.Collector, path: Path, config: pytest.Config) -> bool:
    """Would a folder's walk leave this collector out (it was made because the path was named)?"""
    if type(collector) is pytest.Module:
        return _named_only_module(path, config)
    if isinstance(collector, DoctestTextfile):
        return not any(fnmatch_ex(glob, path) for glob in config.getoption("doctestglob") or ["test*.txt"])
    return False


class _CollectRecorder:
    """``ci-shards plan --pytest``: pytest's own node ids and paths, recorded in-process, so that no
    output option (``-q``, ``-v``, ``-rA``, ``addopts``, other plugins) can change what is planned."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.items: list[dict[str, str]] = []
        self.errors: list[dict[str, str]] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.errors.append({"id": report.nodeid, "message": _last_error_line(report.longreprtext)})

    @pytest.hookimpl(trylast=True)  # after every plugin's own -k/-m/deselection
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = [{"id": i.nodeid, "path": str(Path(i.path).resolve())} for i in session.items]

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        record = {
            "rootdir": str(session.config.rootpath.resolve()),
            "items": self.items,
            "errors": self.errors,
            "exitstatus": int(exitstatus),
        }
        outfile.write_atomic(self.path, json.dumps(record, ensure_ascii=False))


def _restrict_args(config: pytest.Config, args_path: str) -> list[str]:
    """Collect only the shard's files: every other positional argument (paths, node ids, ``--pyargs``
    module names, whatever options the project's conftests define) and ``--pyargs`` are dropped.
    Returns what was dropped. pytest parsed the command line, so an option's value is never taken
    for a path."""
    own = [line for line in Path(args_path).read_text(encoding="utf-8").splitlines() if line]
    own_set = set(own)
    dropped = [a for a in config.args if a not in own_set]
    if config.option.pyargs:
        dropped.insert(0, "--pyargs")
        config.option.pyargs = False
    config.args = own
    return dropped


def pytest_configure(config: pytest.Config) -> None:
    collect_to = config.getoption("ci_shards_collect_to")
    if collect_to and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_CollectRecorder(collect_to), "ci-shards-collect")
    args_path = config.getoption("ci_shards_args")
    dropped = _restrict_args(config, args_path) if args_path else []
    selection = _selection(config)
    report_path = config.getoption("ci_shards_report")
    if selection is None and not report_path:
        return  # inert
    if hasattr(config, "workerinput"):
        # a pytest-xdist worker: it must select the same tests as the controller, but the controller
        # receives every worker's reports and writes the events, so a worker writes none
        report_path = None
    report = open(report_path, "a", encoding="utf-8") if report_path else None  # noqa: SIM115 (closed at unconfigure)
    state = _ShardState(config, selection, report)
    config.pluginmanager.register(state, PLUGIN_NAME)
    if dropped:
        state.emit({"event": "dropped-args", "args": dropped})


def _junit_identity(report: pytest.TestReport) -> dict[str, str]:
    """The ``<testcase>`` attributes pytest's own ``--junitxml`` writes for this test (xunit1, its
    superset family: classname, name, file, line), computed by pytest's own function, so the shard's
    JUnit keeps the identity tools key on (issue 9.5)."""
    names = mangle_test_address(report.nodeid)
    attrs = {"classname": ".".join(names[:-1]), "name": names[-1], "file": report.location[0]}
    if report.location[1] is not None:
        attrs["line"] = str(report.location[1])
    return attrs


def _text(value: object) -> str:
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT // 2] + "\n...\n" + text[-MAX_TEXT // 2 :]


def _last_error_line(text: str) -> str:
    """The one line that says why a collector failed: pytest's last ``E`` line, else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    return (errors or lines or ["collection failed"])[-1][:500]


def _reason(longrepr: object) -> str:
    return str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr or "")
