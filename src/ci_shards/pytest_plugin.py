"""pytest plugin: runs exactly one shard's node ids and records what happened to each of them.

Loaded through the ``pytest11`` entry point (and by ``ci-shards run --pytest`` with
``-p ci_shards.pytest_plugin``); it does nothing unless ``--ci-shards-plan``/``--ci-shards-select``
or ``--ci-shards-report`` is given.

- The shard's pytest is given the user's own arguments (paths, ``--pyargs`` modules, or none:
  ``testpaths``), never the shard's files, so it collects what plain pytest collects, by pytest's
  own rules (``collect_ignore``, ``--ignore``, ``norecursedirs``, ``python_files``). Selection
  happens inside pytest from plan.json (or an id file for re-runs), so there is no argument-length
  limit: ``pytest_ignore_collect`` keeps pytest from walking into folders and files this process runs
  nothing of (another shard's files are never imported), and ``pytest_collection_modifyitems``
  keeps the shard's tests, after every other plugin's hook saw those files whole. Tests the plan does not
  know are never dropped: each runs in exactly one shard (``model.plan.ShardOwnership``), the one that
  owns its file, or for a file no shard owns the plan's ``unowned_shard``, whose walk is the user's own
  selection (never wider).
- Every event is appended to the report as one JSON line and flushed at once, so a run killed at
  the deadline still tells which tests finished and which one was in flight.
- Planned ids that were not collected are reported (a deleted or renamed test must not vanish);
  planned ids that another filter (``-k``, ``-m``) deselected are reported as such, and a planned
  file the project's own rules leave out is reported skipped with the rule.

Ids are written the way the plan names them: the test file's path relative to the directory pytest
was started in (or to ``--ci-shards-ids-root``, a pytest plan's rootdir), plus the node id's ``::``
suffix, so they match whatever rootdir pytest picks. A file outside that folder (a package run with
``--pyargs`` from another folder) is named as pytest names it: relative to the nearest collection
argument that holds it (``_pytest.nodes._check_initialpaths_for_relpath``), so a plan from pytest's
node ids or from pytest-split's timings matches it as it is.

``--ci-shards-collect-to`` is ``ci-shards plan --pytest``'s side: it records every collected node id
in-process (ci_shards.plan.pytest_collect reads it), never through pytest's text output.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import IO, Any

import pytest
from _pytest.junitxml import mangle_test_address  # pytest's own, so the names match its --junitxml
from _pytest.python import path_matches_patterns  # pytest's own python_files matching

from ci_shards.common import outfile
from ci_shards.model.matching import item_file, owning_item
from ci_shards.model.outcome import IGNORED_REASON, NO_TESTS_REASON, NOT_IN_FILE_REASON
from ci_shards.model.plan import Plan, ShardOwnership, parse_shard_spec
from ci_shards.plan.pytest_args import maxfail_in
from ci_shards.run.xdist_hooks import PLUGIN_NAME as XDIST_PLUGIN_NAME
from ci_shards.run.xdist_hooks import CrashedOnce, spread_scope

MAX_TEXT: int = 16 * 1024
# collectors whose report is not one test file's: the session's and the folders' (pytest.Directory is pytest 8's)
_FOLDERS: tuple[type, ...] = tuple(t for t in (pytest.Session, getattr(pytest, "Directory", None)) if t is not None)
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
    files no shard owns). With only an id file (re-runs): the tests those ids cover. ``planned`` is
    what the process answers for: ids reported as not collected when nothing covers them.
    """

    planned: list[str]
    ownership: ShardOwnership | None = None
    index: int = 0
    spread: frozenset[str] = frozenset()  # files xdist schedules by class and function (ShardPlan.spread)
    joined: Mapping[str, str] = field(default_factory=dict)  # file → its group's first file (ShardPlan.joined)

    def keeps(self, key: str, nodeid: str) -> bool:
        if self.ownership is None:
            return any(owning_item(i, self.planned_set) is not None for i in (key, nodeid))
        own = self.ownership
        shard = own.planned_shard(key)
        if shard is None:
            shard = own.planned_shard(nodeid)
        if shard is None:
            shard = own.unplanned_shard(key)
        return shard == self.index

    def skips(self, path_id: str, *, is_dir: bool) -> bool:
        """A file or folder (its id) this process runs nothing of, so pytest need not import or walk it.
        The unowned shard walks every folder (a new file may be anywhere in the user's selection)."""
        if is_dir:
            return not self.walks_everything and path_id not in self.own_folders
        if path_id in self.own_files or self.ownership is None:
            return path_id not in self.own_files
        return self.ownership.unplanned_shard(path_id) != self.index  # another shard's, or no shard's

    @cached_property
    def walks_everything(self) -> bool:
        return self.ownership is not None and self.ownership.unowned_shard == self.index

    @cached_property
    def own_files(self) -> frozenset[str]:
        return frozenset(item_file(i) for i in self.planned)

    @cached_property
    def own_folders(self) -> frozenset[str]:
        """Every folder above an own file, as ids (``a/b/t.py`` gives ``a`` and ``a/b``)."""
        return frozenset(str(parent) for f in self.own_files for parent in PurePosixPath(f).parents)

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
    if select:  # the runner re-runs failed tests by id, with the plan for nothing else
        return _Selection(_read_ids(select))
    shard = plan.shard(index)
    joined = {file: group[0] for group in shard.joined for file in group}
    return _Selection(
        list(shard.items), ownership=plan.ownership(), index=index, spread=frozenset(shard.spread), joined=joined
    )


class _ShardState:
    def __init__(
        self, config: pytest.Config, selection: _Selection | None, report: IO[str] | None, collected_to: str = ""
    ) -> None:
        self.config = config
        # pytest-xdist's first worker: the controller collects nothing, so this worker appends the
        # "collected" event (what its selection kept and left out) to the controller's report
        self.collected_to = collected_to
        self.selection = selection
        self.planned = None if selection is None else selection.planned
        self.planned_set = set(self.planned or ())
        self.report = report
        self.keys: dict[str, str] = {}  # nodeid -> plan-style id
        self.selected: list[str] = []
        self.skipped_collectors: dict[str, str] = {}  # plan-style prefix -> reason
        # plan-style prefix -> how many collectors of that id pytest skipped: under --doctest-modules a test file is
        # two, its DoctestModule and its Module, each importing it and each one skipped in pytest's count ("SKIPPED
        # [2] …: could not import 'scipy'"; networkx 3.6.1's importorskip modules, conformance run 12)
        self.collector_skips: dict[str, int] = {}
        self.collected_files: set[str] = set()  # plan-style paths of modules collected without error
        self.failed_collectors: set[str] = set()  # plan-style ids of this process's collectors that failed
        self.phases: dict[str, dict[str, Any]] = {}
        self.ids_root = Path(config.getoption("ci_shards_ids_root") or config.invocation_params.dir)
        self.session: pytest.Session | None = None
        self.collector_paths: dict[str, Path] = {}  # a collector's node id -> its path
        self.unnamed_files: dict[int, Path] = {}  # id() of a file's collect report whose node id is "" -> the file
        self.initial_paths: list[Path] = []  # the collection arguments' paths, as pytest resolved them
        self.collect_seconds: dict[str, float] = {}  # plan-style file id -> seconds its collectors took
        self.interrupted = ""  # what ended the session early (pytest_keyboard_interrupt), "" when nothing did
        self.exited = False  # whether that was pytest.exit()

    def emit(self, event: dict[str, Any]) -> None:
        if self.report is not None:
            self.report.write(json.dumps(event, ensure_ascii=False) + "\n")
            self.report.flush()

    def key(self, nodeid: str, path: Path | None) -> str:
        # pytest names a module that is itself a collection argument outside the rootdir "" (``--pyargs
        # pkg.tests.test_a pkg.tests.test_b``): two such files' tests may share an id (``::test_x``), so only the
        # path tells them apart, and such an id is never looked up by itself
        unnamed_file = nodeid.startswith("::") or not nodeid
        if nodeid in self.keys and not unnamed_file:
            return self.keys[nodeid]
        key = nodeid
        if path is not None:
            rel = self.path_id(path)
            # an item named "" keeps its "::" (pygments 2.21.0's tests/snippets/conftest.py yields
            # ``LexerInlineTestItem.from_parent(self, name="")``: node id ``x.txt::``), as the plan collected it
            _, sep, suffix = nodeid.partition("::")
            key = f"{rel}{sep}{suffix}"
        if not unnamed_file:
            self.keys[nodeid] = key
        return key

    def path_id(self, path: Path) -> str:
        """A file's or folder's id, by pytest's rule for node ids with ``ids_root`` as the rootdir: its
        path relative to ``ids_root`` when it is under it, else relative to the nearest collection
        argument that holds it (``_pytest.nodes.FSCollector``: a ``--pyargs`` package elsewhere)."""
        try:
            return path.relative_to(self.ids_root).as_posix()
        except ValueError:
            pass
        if self.session is not None:
            for parent in path.parents:
                if self.session.isinitpath(parent):
                    return path.relative_to(parent).as_posix()
        return Path(os.path.relpath(path, self.ids_root)).as_posix()

    def id_of(self, nodeid: str, location: str | None = None) -> str:
        """The plan-style id of a test this process may not have collected itself (pytest-xdist's
        controller only sees node ids, which are relative to rootdir); ``location``: the test's file as its
        report gives it (relative to rootdir), which names the file of an id pytest left without one."""
        if nodeid.startswith("::") and location is not None:
            return self.key(nodeid, Path(os.path.normpath(self.config.rootpath / location)))
        if nodeid in self.keys:
            return self.keys[nodeid]
        return self.key(nodeid, self.config.rootpath / nodeid.split("::", 1)[0])

    # ---- hooks (this object is registered as a plugin only when the options are given)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.report is not None:
            self.report.close()
            self.report = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        """Never walk into a folder, nor collect a file, this process runs nothing of (None: pytest's
        own rules and the project's decide, as in a plain run)."""
        if self.selection is None:
            return None
        path_id = self.path_id(collection_path)
        return True if self.selection.skips(path_id, is_dir=collection_path.is_dir()) else None

    @pytest.hookimpl(wrapper=True)
    def pytest_collect_file(
        self, file_path: Path, parent: pytest.Collector
    ) -> Generator[None, list[pytest.Collector], list[pytest.Collector]]:
        """A planned ``.py`` file that no collector takes in the walk (``t.py`` from ``--items``, which
        no ``python_files`` pattern matches) is collected as a module, as pytest collects any ``.py``
        named on its command line: the plan names it, so its tests are not lost."""
        collectors = yield
        if collectors or self.selection is None or file_path.suffix != ".py":
            return collectors
        if self.path_id(file_path) in self.selection.own_files and _named_only_module(file_path, parent.config):
            return [pytest.Module.from_parent(parent, path=file_path)]
        return collectors

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        """Each test file's collection seconds (importing it, its classes, its parametrized tests): the
        shard pays them once per file it holds part of, and with pytest-xdist once on every worker before
        its first test, which the tests' own times leave out (report/overhead.py learns them per file).
        A file's report without a node id (a module pytest names "", see ``key``) is remembered with its path."""
        start = time.perf_counter()
        try:
            report = yield
            if not report.nodeid and not isinstance(collector, _FOLDERS):
                self.unnamed_files[id(report)] = collector.path
            return report
        finally:
            if not isinstance(collector, _FOLDERS):  # a folder's report is its conftest.py and its walk
                file = self.path_id(collector.path)
                self.collect_seconds[file] = self.collect_seconds.get(file, 0.0) + time.perf_counter() - start

    def pytest_collectstart(self, collector: pytest.Collector) -> None:
        path = getattr(collector, "path", None)
        if collector.nodeid and isinstance(path, Path):
            self.collector_paths[collector.nodeid] = path
        if isinstance(path, Path) and collector.session.isinitpath(path):
            self.initial_paths.append(path)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # a collector's node id is relative to rootdir (or to a collection argument outside it), which
        # need not be the directory pytest ran in; a collector inside a file is named by its file's path, not its
        # own (pyyaml 6.0.4's legacy tests point theirs at the test function's source module)
        file_part = item_file(report.nodeid)
        unnamed_file = self.unnamed_files.pop(id(report), None)
        path = unnamed_file or self.collector_paths.get(file_part) or self.config.rootpath / file_part
        key = self.key(report.nodeid, path) if report.nodeid or unnamed_file else "<collection>"
        if report.failed and self.runs_nothing_of(key, path):
            # another shard's error, which also explains this process's exit code
            self.emit({"event": "collect-error", "id": key, "elsewhere": True})
        elif report.failed:
            self.failed_collectors.add(key)
            self.emit(
                {
                    "event": "collect-error",
                    "id": key,
                    "message": "collection failure",
                    "text": _text(report.longreprtext),
                }
            )
        elif report.skipped and key != "<collection>":
            self.skipped_collectors[key] = _reason(report.longrepr)
            self.collector_skips[key] = self.collector_skips.get(key, 0) + 1
        elif key != "<collection>" and "::" not in report.nodeid:
            self.collected_files.add(key)

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> Generator[None, None, None]:
        """The shard's tests kept, after every other plugin's hook saw the whole collection of the shard's files,
        as each sees it in a plain run that deselects with -k: syrupy records the collected tests there and counts
        a snapshot of a test collected, not deselected and not run as unused (exit 1 on every shard of a cut file,
        conformance run 8). What is ours is decided first, so -k/-m after it are told apart (``deselected``)."""
        if self.selection is None:
            for item in items:
                self.key(item.nodeid, _file_path(item))
            return (yield)
        keeps = self.selection.keeps
        ours = {id(item) for item in items if keeps(self.key(item.nodeid, _file_path(item)), item.nodeid)}
        self.selected = [self.key(i.nodeid, _file_path(i)) for i in items if id(i) in ours]
        result = yield
        drop = [item for item in items if id(item) not in ours]
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if id(item) in ours]
        return result

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        final = [self.key(i.nodeid, _file_path(i)) for i in session.items]
        event: dict[str, Any] = {"event": "collected", "ids": final, "collect_seconds": self.rounded_collect_seconds()}
        if self.planned is not None:
            final_set = set(final)
            # planned tests another filter (-k, -m) took away; unplanned ones were never promised
            event["deselected"] = [
                k for k in self.selected if k not in final_set and owning_item(k, self.planned_set) is not None
            ]
            covered = {owning_item(k, self.planned_set) for k in self.selected}
            collectors = self.own_skipped_collectors()
            missing = [p for p in self.planned if p not in covered and p not in collectors]
            skipped = {planned_id: self.why_not_collected(planned_id) for planned_id in missing}
            event["skipped_collectors"] = collectors
            event["skipped_collector_reports"] = {
                k: self.collector_skips[k] for k in collectors if self.collector_skips.get(k, 1) > 1
            }
            event["skipped_at_collection"] = {p: why for p, why in skipped.items() if why}
            event["not_collected"] = [p for p in missing if not skipped[p]]
        if self.collected_to:
            _append_line(self.collected_to, event)
        self.emit(event)

    def runs_nothing_of(self, key: str, path: Path) -> bool:
        """Whether a collector is in a file this process would not have collected had pytest asked
        (``_Selection.skips``): pytest collects a file named as an argument without asking ``pytest_ignore_collect``,
        so every shard imports it, and a failure to collect it is the one shard's that runs its tests, told once,
        as plain pytest tells it."""
        return self.selection is not None and path.is_file() and self.selection.skips(item_file(key), is_dir=False)

    def own_skipped_collectors(self) -> dict[str, str]:
        """The skipped collectors this shard answers for (``ShardOwnership.shard_of`` their id: a file's
        owner, the unowned shard for a folder, which it alone walks whole), each a skipped test as pytest counts
        it ("1 skipped" for a module's ``pytest.importorskip``); none in a re-run, which selects tests by id."""
        selection = self.selection
        if selection is None or selection.ownership is None:
            return {}
        own, index = selection.ownership, selection.index
        return {key: why for key, why in self.skipped_collectors.items() if own.shard_of(key) == index}

    def why_not_collected(self, planned_id: str) -> str:
        """Why pytest's own rules collected nothing of a planned item, or "" (then it is lost: said loudly)."""
        for prefix, reason in self.skipped_collectors.items():
            # a folder's collector is skipped too, when its conftest.py skips at module level
            # (the shape of babel 2.19.0's tests/benchmarks/conftest.py without
            # pytest-benchmark): its files are never collected, as in plain pytest
            if planned_id == prefix or planned_id.startswith((prefix + "::", prefix + "/")):
                return reason
        reason = self.left_out(item_file(planned_id))
        if not reason and planned_id in self.collected_files:
            # a planned file (a discovery plan names files found on disk) that pytest
            # collected without error and that holds no test: nothing to run, nothing lost
            return NO_TESTS_REASON
        if not reason and item_file(planned_id) in self.collected_files and not self.failed_under(planned_id):
            # a test id from the timings a discovery plan cut its file by, which the file, collected whole and
            # without error, no longer holds: plain pytest runs no such test (deleted or renamed since the timings;
            # a parametrized case whose id changed runs under its new id, unplanned)
            return NOT_IN_FILE_REASON
        return reason

    def failed_under(self, planned_id: str) -> bool:
        """Whether a collector inside the planned test's file failed (a class's collection error): its tests are
        lost, and said so, not "no such test"."""
        return any(planned_id == key or planned_id.startswith(key + "::") for key in self.failed_collectors)

    def rounded_collect_seconds(self) -> dict[str, float]:
        return {file: round(seconds, 4) for file, seconds in sorted(self.collect_seconds.items())}  # perf_counter sums

    def xdist_scope(self, nodeid: str) -> str | None:
        """pytest-xdist's work unit of a test in a file the plan spreads over the workers, or joins with others (its
        group's first file); None: xdist's own."""
        if self.selection is None or not (self.selection.spread or self.selection.joined):
            return None
        file = item_file(self.id_of(nodeid))
        if file in self.selection.joined:
            return self.selection.joined[file]
        return spread_scope(nodeid) if file in self.selection.spread else None

    def left_out(self, file: str) -> str:
        """Why pytest's own walk of the user's selection does not collect this planned file, or "" (a
        file that is gone, or outside what the arguments select, is not collected: said loudly)."""
        for root in (self.ids_root, *self.initial_paths):
            path = root / file
            if path.is_file() and self.session is not None:
                return _why_left_out(path, self.session)
        return ""

    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        self.emit({"event": "start", "id": self.id_of(nodeid, location[0])})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = self.phases.setdefault(
            report.nodeid, {"duration": 0.0, "outcome": "passed", "message": "", "text": ""}
        )
        subtest = _subtest_description(report)
        if subtest is not None:
            _note_subtest(record, report, subtest)
            return
        record["duration"] += report.duration
        if str(report.outcome) == "rerun" or (record.get("rerun") and report.when == "teardown"):
            # pytest-rerunfailures (16.7): this attempt failed and another follows, after the attempt's teardown
            # report when the setup or call failed; the result is the last attempt's, the time all of theirs, and
            # each failed attempt is kept: a test that passes on a re-run is flaky, listed as ci-shards' own
            # re-runs list theirs (docs/rules.md), not hidden by the plugin that re-ran it
            duration, reruns = record["duration"], record.get("reruns", [])
            if str(report.outcome) == "rerun":
                reruns = [*reruns, _failed_attempt(report)]
            record.clear()
            record.update(duration=duration, outcome="passed", message="", text="", rerun=True, reruns=reruns)
            return
        record.pop("rerun", None)
        if report.failed:
            outcome, message = _failure_words(report)
            if record["outcome"] not in ("failed", "error"):
                record.update(outcome=outcome, message=message[:4096], text=_text(report.longreprtext))
            else:  # a second failure of the test (its teardown after its call, its call after failed subtests)
                head = f"{message}\n" if report.when != "call" else ""
                record["text"] = _text(f"{record['text']}\n\n{head}{report.longreprtext.strip()}")
        elif report.skipped and record["outcome"] == "passed":
            reason = getattr(report, "wasxfail", "") or _reason(report.longrepr)
            record.update(outcome="skipped", message=str(reason)[:4096])
            if hasattr(report, "wasxfail"):
                record["xfail"] = "xfailed"
        elif report.passed and report.when == "call" and hasattr(report, "wasxfail"):
            record["xfail"] = "xpassed"  # a non-strict xfail that passed (strict ones fail)
        # pytest-xdist's report of a worker that died in this test comes alone, with when="???"
        # (xdist/dsession.py, handle_crashitem): it is the test's result, not a phase of it
        if report.when == "teardown" or report.when not in ("setup", "call"):
            self.phases.pop(report.nodeid, None)
            self._emit_result(report, record)
        elif report.when == "call" or not report.passed:
            record["counted"] = report  # pytest's summary counts the test from here on, teardown or not

    def _emit_result(self, report: pytest.TestReport, record: dict[str, Any]) -> None:
        self.emit(
            {
                "event": "result",
                "id": self.id_of(report.nodeid, report.location[0]),
                "outcome": record["outcome"],
                "duration": round(record["duration"], 6),
                "message": record["message"],
                "text": record["text"],
                # pytest's locations are 0-based; CaseResult.line and annotations are 1-based
                "line": None if report.location[1] is None else report.location[1] + 1,
                "xfail": record.get("xfail", ""),
                "junit": _junit_identity(report),
                **({"reruns": record["reruns"]} if record.get("reruns") else {}),
            }
        )

    def _emit_unfinished(self) -> str:
        """After ``pytest.exit()`` (a fixture's teardown, or ``--pdb``'s quit after a failure): each test whose
        call (or failed setup) was reported but whose teardown never was, counted as pytest's summary counts it
        ("1 passed", "1 failed"), not as never run; the words for the stop that name where it came."""
        where = ""
        for record in self.phases.values():
            report = record.get("counted")
            if isinstance(report, pytest.TestReport):
                self._emit_result(report, record)
                where = (
                    f" after {self.id_of(report.nodeid, report.location[0])}'s {report.when}, before its teardown ended"
                )
        return where

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # pytest calls this for pytest.exit() and for pytest-xdist's Interrupted("stopping after N failures")
        # too (_pytest/main.py wrap_session): the planned tests after it never run, and the shard says why
        self.interrupted = _interruption(excinfo, self.config)
        self.exited = isinstance(excinfo.value, pytest.exit.Exception)

    def pytest_internalerror(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # a plugin's or conftest's hook raised: pytest prints INTERNALERROR> lines and ends the session (exit 3)
        self.interrupted = self.interrupted or f"INTERNALERROR: {_last_error_line(excinfo.exconly())}"

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        event: dict[str, Any] = {"event": "finish", "exitstatus": int(exitstatus)}
        if self.exited:  # not a KeyboardInterrupt: ci-shards' deadline names the test it stopped in its teardown
            self.interrupted += self._emit_unfinished()
        stopped = self.interrupted or _stopped_early(session)
        if stopped:
            event["stopped"] = stopped
        self.emit(event)


def _interruption(excinfo: pytest.ExceptionInfo[BaseException], config: pytest.Config) -> str:
    """pytest's own words for what ended the session, in one capped line."""
    if isinstance(excinfo.value, pytest.exit.Exception):
        text = f"pytest.exit({excinfo.value.msg!r}) was called"
    else:  # KeyboardInterrupt, or pytest-xdist's Interrupted (session.shouldstop, e.g. its --maxfail)
        text = excinfo.exconly()
    return _with_maxfail(_last_error_line(text), config)


def _stopped_early(session: pytest.Session) -> str:
    """Why pytest stopped before running every selected test ("" when it did not): ``session.shouldfail``
    or ``session.shouldstop`` (-x/--maxfail's "stopping after 1 failures", --stepwise, a plugin)."""
    reason = session.shouldfail or session.shouldstop
    if not reason:
        return ""
    return _with_maxfail(reason if isinstance(reason, str) else "a plugin stopped the session", session.config)


def _with_maxfail(text: str, config: pytest.Config) -> str:
    """``text``, naming where -x/--maxfail came from when that is what stopped the session."""
    maxfail = config.option.maxfail
    if not maxfail or "failure" not in text:
        return text
    return f"{text}, by -x/--maxfail={maxfail} {_maxfail_origin(config)}: pass --maxfail=0 to run every test"


def _maxfail_origin(config: pytest.Config) -> str:
    """Where the stopping option was given: the ini file's addopts, PYTEST_ADDOPTS, else the command line."""
    if maxfail_in(config.getini("addopts")):
        return f"from addopts in {config.inipath.name if config.inipath else 'the ini file'}"
    if maxfail_in(shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))):
        return "from PYTEST_ADDOPTS"
    return "on the command line"


def _why_left_out(path: Path, session: pytest.Session) -> str:
    """The rule of a walk that leaves ``path`` out: ``pytest_ignore_collect`` (conftests'
    ``collect_ignore``/``collect_ignore_glob``, ``--ignore``, ``norecursedirs``, plugins), which pytest
    consults for the file and each folder between it and the collection argument; "" when the file is
    outside every collection argument."""
    chain = [path, *path.parents]
    inside = [n for n, entry in enumerate(chain) if session.isinitpath(entry)]
    if not inside:
        return ""
    config = session.config
    for entry in chain[: inside[0]]:
        if config.hook.pytest_ignore_collect(collection_path=entry, config=config):
            return IGNORED_REASON
    return ""


def _file_path(item: pytest.Item) -> Path:
    """The path of the file the item's node id names: the node whose id is the id's file part. Not
    ``item.path``, which a custom item may point elsewhere (pyyaml 6.0.4's legacy tests set it to the
    data file each test reads: ``tests/legacy_tests/test_yaml.py::test_marks::test_mark.marks`` has
    the path ``tests/legacy_tests/data/test_mark.marks``), and the id of the test is pytest's node id."""
    file_part = item_file(item.nodeid)
    for node in reversed(item.listchain()):
        if node.nodeid == file_part and isinstance(getattr(node, "path", None), Path):
            return node.path
    return item.path


def _from_rootdir(path: Path, config: pytest.Config) -> str:
    """A file's path from the rootdir, as the plan names a file pytest left unnamed."""
    return Path(os.path.relpath(path.resolve(), config.rootpath.resolve())).as_posix()


def _named_only_module(path: Path, config: pytest.Config) -> bool:
    """A ``.py`` file a folder's walk does not collect as a test module (its name does not match)."""
    return not path_matches_patterns(path, [*config.getini("python_files"), "__init__.py"])


class _CollectRecorder:
    """``ci-shards plan --pytest``: pytest's own node ids and paths, recorded in-process, so that no
    output option (``-q``, ``-v``, ``-rA``, ``addopts``, other plugins) can change what is planned."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.items: list[dict[str, str]] = []
        self.errors: list[dict[str, str]] = []
        self.deselected: dict[str, int] = {}  # file part of the node id → tests -m/-k/plugins took away

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        """Each failed collector by its id; a module pytest left unnamed ("") by its path, as the plan names its
        tests (``plan.pytest_collect.with_file_named``), so the refusal says which file failed."""
        report = yield
        if report.failed:
            named = report.nodeid or isinstance(collector, _FOLDERS)
            where = report.nodeid if named else _from_rootdir(collector.path, collector.config)
            self.errors.append({"id": where, "message": _last_error_line(report.longreprtext)})
        return report

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        # collected, never run: their collection is still paid by the shard that runs their file
        for item in items:
            file = item_file(item.nodeid) or _from_rootdir(_file_path(item), item.config)
            self.deselected[file] = self.deselected.get(file, 0) + 1

    @pytest.hookimpl(trylast=True)  # after every plugin's own -k/-m/deselection
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = [{"id": i.nodeid, "path": str(Path(_file_path(i)).resolve())} for i in session.items]

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        record = {
            "rootdir": str(session.config.rootpath.resolve()),
            "items": self.items,
            "errors": self.errors,
            "deselected": self.deselected,
            "exitstatus": int(exitstatus),
            "runs_past_errors": _runs_past_collection_errors(session.config, len(self.errors)),
        }
        outfile.write_atomic(self.path, json.dumps(record, ensure_ascii=False))


def _runs_past_collection_errors(config: pytest.Config, errors: int) -> str:
    """What makes this pytest, run for its tests rather than ``--collect-only``, go on past ``errors`` failed
    collectors ("" when nothing does: it stops with "Interrupted: N errors during collection"): its
    ``--continue-on-collection-errors``, or pytest-xdist's distribution (its controller runs whatever the workers
    collected; inert under ``--collect-only``, its options already set), unless ``--maxfail`` counts them to a stop."""
    maxfail = config.getoption("maxfail", 0) or 0
    if maxfail and errors >= maxfail:
        return ""
    if config.getoption("continue_on_collection_errors", False):
        return "--continue-on-collection-errors"
    if config.pluginmanager.hasplugin("xdist") and config.getoption("dist", "no") != "no":
        return "pytest-xdist" if config.getoption("tx", None) else ""
    return ""


def pytest_configure(config: pytest.Config) -> None:
    collect_to = config.getoption("ci_shards_collect_to")
    if collect_to and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_CollectRecorder(collect_to), "ci-shards-collect")
    selection = _selection(config)
    report_path = config.getoption("ci_shards_report")
    if selection is None and not report_path:
        return  # inert
    collected_to = ""
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        # a pytest-xdist worker: it must select the same tests as the controller, but the controller
        # receives every worker's reports and writes the events, so a worker writes none but the first
        # worker's collection (the controller collects nothing: xdist's DSession.pytest_collection)
        collected_to = report_path if report_path and worker.get("workerid") == "gw0" else ""
        report_path = None
    report = open(report_path, "a", encoding="utf-8") if report_path else None  # noqa: SIM115 (closed at unconfigure)
    state = _ShardState(config, selection, report, collected_to)
    config.pluginmanager.register(state, PLUGIN_NAME)
    if worker is None and config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses", None):
        config.pluginmanager.register(CrashedOnce(state.xdist_scope), XDIST_PLUGIN_NAME)


def _append_line(path: str, event: dict[str, Any]) -> None:
    """One JSON line appended in one write(2) on an O_APPEND descriptor: the controller appends to the
    same file, and each append lands whole at the end (POSIX write(2), "O_APPEND")."""
    data = (json.dumps(event, ensure_ascii=False) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _junit_identity(report: pytest.TestReport) -> dict[str, str]:
    """The ``<testcase>`` attributes pytest's own ``--junitxml`` writes for this test (xunit1, its
    superset family: classname, name, file, line), computed by pytest's own function, so the shard's
    JUnit keeps the identity tools key on (issue 9.5)."""
    names = mangle_test_address(report.nodeid)
    attrs = {"classname": ".".join(names[:-1]), "name": names[-1], "file": report.location[0]}
    if report.location[1] is not None:
        attrs["line"] = str(report.location[1])
    return attrs


def _subtest_description(report: pytest.TestReport) -> str | None:
    """``[msg] (i=1)`` for a subtest's report, as pytest's summary names it; None for a test's own phase. pytest 9's
    ``SubtestReport`` (the ``subtests`` fixture, unittest's ``subTest``) and the pytest-subtests plugin's
    ``SubTestReport`` both carry a ``context`` of the ``msg`` and ``kwargs`` given to the subtest."""
    context = getattr(report, "context", None)
    kwargs = getattr(context, "kwargs", None)
    if context is None or kwargs is None:
        return None
    msg = getattr(context, "msg", None)
    parts = [f"[{msg}]"] if msg is not None else []
    if kwargs:
        parts.append("(" + ", ".join(f"{k}={v}" for k, v in kwargs.items()) + ")")
    return " ".join(parts) or "(<subtest>)"


def _note_subtest(record: dict[str, Any], report: pytest.TestReport, description: str) -> None:
    """A subtest's report into its test's ``record``; the test stays one test, as in pytest's --junitxml.

    Its time is already in the test's call report (pytest's --junitxml adds it again: a test of four 0.25 s subtests
    took 2.0 s there, 1.0 s here). A skipped subtest skips only itself: pytest says "1 passed, 1 skipped" of a test
    one of whose subtests skipped. A failed one fails the test, as pytest 9 fails it ("contains 2 failed
    subtests"; pytest-subtests left the test passed): the first names the message, each adds its traceback."""
    if not report.failed:
        return
    message = f"{description}: {_crash_message(report) or 'failed'}"
    block = f"{description}\n{report.longreprtext.strip()}"
    if record["outcome"] in ("failed", "error"):
        record["text"] = _text(f"{record['text']}\n\n{block}")
    else:
        record.update(outcome="failed", message=message[:4096], text=_text(block))


def _failure_words(report: pytest.TestReport) -> tuple[str, str]:
    """(outcome, message) of a failed report: ``failed`` in its call, ``error`` in its setup or teardown, said so."""
    message = _crash_message(report)
    if report.when not in ("setup", "call", "teardown"):
        return "failed", message  # xdist: the worker died in the test ("worker 'gw0' crashed while running ...")
    if report.when != "call":
        return "error", f"failed on {report.when}: {message}"
    return "failed", message


def _failed_attempt(report: pytest.TestReport) -> dict[str, Any]:
    """An attempt pytest-rerunfailures re-runs (its report's outcome is ``rerun``), as a result event lists it."""
    outcome, message = _failure_words(report)
    return {
        "outcome": outcome,
        "message": message[:4096],
        "text": _text(report.longreprtext),
        "duration": round(report.duration, 6),
    }


def _crash_message(report: pytest.TestReport) -> str:
    """The one line pytest's summary gives a failed report: its crash's message, else its last line."""
    crash = getattr(report.longrepr, "reprcrash", None)
    lines = report.longreprtext.strip().splitlines()
    return str(getattr(crash, "message", "") or (lines[-1] if lines else ""))


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
