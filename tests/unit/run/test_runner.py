"""Pure parts of the run stage: command templates and batching, classification, re-run merging, options."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from ci_shards.commands.run import parse_duration, parse_signal, parse_size
from ci_shards.common.errors import UsageError
from ci_shards.local import auto_jobs, available_memory
from ci_shards.model.outcome import (
    COLLECTION_ERROR_TYPE,
    COLLECTOR_SKIPPED_TYPE,
    LEFT_OUT,
    XFAILED_TYPE,
    XPASSED_TYPE,
    CaseOutcome,
    CaseResult,
    ShardStatus,
    Totals,
    in_pytests_junit,
)
from ci_shards.run import command as cmd
from ci_shards.run.classify import (
    FlakyResult,
    Policy,
    Report,
    Run,
    Verdict,
    decide,
    merge_attempts,
    report_from_events,
)
from ci_shards.run.process import ProcessResult, start_error_message
from ci_shards.run.shard_output import attempt_entry, tally
from ci_shards.run.spool import read_tail


def case(test_id: str, outcome: CaseOutcome = CaseOutcome.PASSED, time: float = 0.1) -> CaseResult:
    return CaseResult(
        test_id=test_id,
        name=test_id.rpartition("::")[2],
        file=test_id.split("::", maxsplit=1)[0],
        outcome=outcome,
        time=time,
        message=f"{outcome.value} msg",
    )


def run(*cases: CaseResult, rc: int | None = 0, rerun: int = 0, **kw: object) -> Run:
    report = kw.pop("report", None) or Report(cases=cases)
    return Run(rerun=rerun, items=(), exit_code=rc, signal=None, report=report, **kw)  # type: ignore[arg-type]


# ---- command templates and batching


def test_expand_places_items_files_and_junit() -> None:
    argv = cmd.expand(
        ["pytest", "--junitxml={junit}", "@{items_file}", "{items}"],
        items=["a", "b"],
        items_file="/t/i",
        junit="/t/j.xml",
    )
    assert argv == ["pytest", "--junitxml=/t/j.xml", "@/t/i", "a", "b"]


def test_batches_keep_every_item_once_in_order_and_fit_the_limit() -> None:
    items = [f"tests/test_{i}.py::test_{i}" for i in range(5000)]
    template = ["python", "-m", "pytest", "{items}"]
    groups = cmd.batches(template, items, limit=20_000, environment_bytes=1000)
    assert len(groups) > 5
    assert [i for g in groups for i in g] == items
    for group in groups:
        size = sum(len(i) + 1 + 8 for i in group)
        assert size <= 20_000 - 1000


def test_batches_without_items_placeholder_is_one_batch() -> None:
    assert cmd.batches(["make", "test"], ["a", "b"], limit=10, environment_bytes=0) == [["a", "b"]]


def test_an_item_too_long_for_the_os_limit_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="items_file"):
        cmd.batches(["x", "{items}"], ["y" * 10_000], limit=8000, environment_bytes=0)


def test_a_command_word_that_is_not_utf8_is_measured_and_recorded_as_its_bytes() -> None:
    # found by tests/unit/test_cli_fuzz.py: `run ... -- mytool $'\xff'` was an internal error (exit 3), twice: the
    # per-argument check encoded the word as UTF-8, then outcome.json could not hold it
    word = os.fsdecode(b"\xff")  # a lone surrogate, as Python reads that byte of argv
    assert cmd.batches(["mytool", word, "{items}"], ["a"], limit=8000, environment_bytes=0) == [["a"]]
    assert cmd.env_size({"X": word}) == cmd.env_size({"X": "y"})
    entry = attempt_entry(argv=["mytool", word], result=ProcessResult(), rerun=0, batch=(1, 1), items=1, tests=0)
    assert entry["argv"] == "mytool '\\xff'"
    json.dumps(entry, ensure_ascii=False).encode("utf-8")


# ---- classification


def test_passed_when_every_planned_item_is_reported() -> None:
    verdict = decide(
        shard_index=1,
        shard_name="s",
        planned=["a::t1", "a::t2"],
        runs=[run(case("a::t1"), case("a::t2"))],
        policy=Policy(),
    )
    assert (verdict.status, verdict.records) == (ShardStatus.PASSED, ())


def test_failed_test_fails_the_shard_with_a_record() -> None:
    verdict = decide(
        shard_index=2,
        shard_name="s",
        planned=["a::t1"],
        runs=[run(case("a::t1", CaseOutcome.FAILED), rc=1)],
        policy=Policy(),
    )
    assert verdict.status is ShardStatus.FAILED
    assert [(r.kind.value, r.shard) for r in verdict.records] == [("failed", 2), ("shard", 2)]


def test_nonzero_exit_with_clean_report_is_failed() -> None:
    verdict = decide(shard_index=1, shard_name="s", planned=["a::t1"], runs=[run(case("a::t1"), rc=3)], policy=Policy())
    assert verdict.status is ShardStatus.FAILED
    assert "code 3" in verdict.reason


def test_order_never_started_then_timed_out() -> None:
    never = decide(
        shard_index=1,
        shard_name="s",
        planned=["a::t1"],
        runs=[run(rc=None, start_error="cannot start 'x': command not found")],
        policy=Policy(),
    )
    assert never.status is ShardStatus.NEVER_STARTED
    assert never.not_run == ("a::t1",)
    timed = decide(
        shard_index=1,
        shard_name="s",
        planned=["a::t1", "a::t2"],
        runs=[run(case("a::t1"), rc=0, timed_out=True)],
        policy=Policy(),
    )
    assert timed.status is ShardStatus.TIMED_OUT  # even with exit code 0
    assert timed.not_run == ("a::t2",)


def test_too_slow_passing_test_fails_with_the_reason() -> None:
    verdict = decide(
        shard_index=1,
        shard_name="s",
        planned=["a::t1"],
        runs=[run(case("a::t1", time=12.0))],
        policy=Policy(max_test_seconds=10),
    )
    assert verdict.status is ShardStatus.FAILED
    assert "--max-test-seconds" in verdict.cases[0].message


def test_flaky_resolved_by_rerun_passes_unless_flaky_result_fail() -> None:
    runs = [run(case("a::t1", CaseOutcome.FAILED), case("a::t2"), rc=1), run(case("a::t1"), rerun=1)]
    verdict = decide(shard_index=1, shard_name="s", planned=["a::t1", "a::t2"], runs=runs, policy=Policy())
    assert (verdict.status, verdict.flaky) == (ShardStatus.PASSED, ("a::t1",))
    strict = decide(
        shard_index=1,
        shard_name="s",
        planned=["a::t1", "a::t2"],
        runs=runs,
        policy=Policy(flaky_result=FlakyResult.FAIL),
    )
    assert strict.status is ShardStatus.FAILED


def test_merge_attempts_keeps_every_failed_attempt() -> None:
    first = [case("a::t1", CaseOutcome.FAILED)]
    merged = merge_attempts(first, [[case("a::t1", CaseOutcome.FAILED)], [case("a::t1", CaseOutcome.ERROR)]])
    assert merged[0].outcome is CaseOutcome.FAILED
    assert [a.outcome for a in merged[0].attempts] == [CaseOutcome.FAILED, CaseOutcome.ERROR]


def test_file_items_and_test_prefixes_cover_their_tests() -> None:
    runs = [run(case("a.py::t1"), case("b.py::TestX::t"), case("c.py::t[x::y]"))]
    verdict = decide(
        shard_index=1, shard_name="s", planned=["a.py", "b.py::TestX", "c.py::t"], runs=runs, policy=Policy()
    )
    assert (verdict.status, verdict.not_run) == (ShardStatus.PASSED, ())


def test_unmappable_report_fails_unverified_with_every_item_not_run() -> None:
    # issue 8: run said passed here while aggregate said failed / unverified for the same folder
    verdict = decide(
        shard_index=1, shard_name="s", planned=["./pkg/..."], runs=[run(case("github.com/x::TestY"))], policy=Policy()
    )
    assert verdict.status is ShardStatus.FAILED
    assert "name none of its 1 planned item" in verdict.reason
    assert verdict.not_run == ("./pkg/...",)


def test_report_from_events_finds_the_test_in_flight() -> None:
    lines = [
        '{"event": "collected", "ids": ["a::t1", "a::t2"], "not_collected": ["a::gone"], "deselected": []}',
        '{"event": "start", "id": "a::t1"}',
        '{"event": "result", "id": "a::t1", "outcome": "passed", "duration": 0.5}',
        '{"event": "start", "id": "a::t2"}',
        '{"event": "res',  # cut by the kill
    ]
    report = report_from_events(lines)
    assert [c.test_id for c in report.cases] == ["a::t1"]
    assert report.in_flight == ("a::t2",)
    assert report.not_collected == ("a::gone",)


def _nothing_ran(lines: list[str], *, planned: list[str]) -> Verdict:
    """The verdict of a shard whose pytest exited 5 (no test ran) after writing these plugin events."""
    report = report_from_events(lines)
    return decide(shard_index=1, shard_name="s", planned=planned, runs=[run(rc=5, report=report)], policy=Policy())


def test_a_skipped_collector_is_one_skipped_test_and_accounts_for_the_planned_file_it_is() -> None:
    # a module's pytest.importorskip: pytest says "1 skipped" and writes a skipped testcase; the files of a skipped
    # folder are accounted for, and no test, as pytest counts them
    lines = [
        '{"event": "collected", "ids": [], "deselected": [], "not_collected": [],'
        ' "skipped_collectors": {"t/test_np.py": "Skipped: no numpy", "t/opt": "Skipped: no extra"},'
        ' "skipped_at_collection": {"t/opt/test_x.py": "Skipped: no extra"}}',
    ]
    verdict = _nothing_ran(lines, planned=["t/test_np.py", "t/opt/test_x.py"])
    assert verdict.status is ShardStatus.PASSED, verdict.reason
    assert [(c.test_id, c.counted_as, in_pytests_junit(c)) for c in verdict.cases] == [
        ("t/test_np.py", "skipped", True),
        ("t/opt", "skipped", True),
        ("t/opt/test_x.py", LEFT_OUT, False),
    ]
    totals = Totals.of(verdict.cases)
    assert (totals.tests, totals.skipped, totals.left_out) == (2, 2, 1)


@pytest.mark.parametrize(
    ("outcome", "kind", "passes"),
    [
        (CaseOutcome.SKIPPED, COLLECTOR_SKIPPED_TYPE, True),  # the module skipped at import: pytest collected no test
        (CaseOutcome.SKIPPED, "pytest.skip", False),  # a test that ran and skipped: exit 5 is then no pytest's
    ],
)
def test_exit_5_from_a_command_whose_report_holds_only_skipped_collectors_is_pytests_nothing_to_run(
    outcome: CaseOutcome, kind: str, passes: bool
) -> None:
    # a command given {items} that runs one importorskip module whole: pytest writes its skipped testcase and exits
    # 5 ("no tests ran"), where plain pytest of the suite passes; the shard passes as a --pytest shard does
    skipped = CaseResult(test_id="t/test_np.py", name="t/test_np.py", file="t/test_np.py", outcome=outcome, type=kind)
    verdict = decide(
        shard_index=1, shard_name="s", planned=["t/test_np.py"], runs=[run(skipped, rc=5)], policy=Policy()
    )
    assert (verdict.status is ShardStatus.PASSED) is passes, verdict.reason
    assert passes or "exited with code 5" in verdict.reason


def test_a_collector_pytest_skipped_twice_is_two_skipped_tests_as_pytest_counts_them() -> None:
    # under --doctest-modules pytest collects a test file as a doctest module and as a test module, each importing
    # it: a module-level importorskip skips both, "SKIPPED [2]" and "2 skipped" for the one file (networkx 3.6.1's
    # 34 such modules: 398 skipped, where ci-shards said 364; conformance run 12)
    lines = [
        '{"event": "collected", "ids": [], "deselected": [], "not_collected": [], "skipped_at_collection": {},'
        ' "skipped_collectors": {"t/test_sp.py": "Skipped: no scipy", "t/test_pd.py": "Skipped: no pandas"},'
        ' "skipped_collector_reports": {"t/test_sp.py": 2}}',
    ]
    verdict = _nothing_ran(lines, planned=["t/test_sp.py", "t/test_pd.py"])
    assert verdict.status is ShardStatus.PASSED, verdict.reason
    assert [(c.test_id, c.counted_as) for c in verdict.cases] == [
        ("t/test_sp.py", "skipped"),
        ("t/test_sp.py", "skipped"),
        ("t/test_pd.py", "skipped"),
    ]
    assert Totals.of(verdict.cases).skipped == 3


def test_a_session_pytest_ended_early_is_the_cause_of_its_unreported_tests() -> None:
    # the plugin's finish event carries pytest's words (-x, pytest.exit()); the tests after it are not "never
    # reported (not collected, deleted, renamed or crashed)", and its exit code is not "no failure"
    lines = [
        '{"event": "start", "id": "a::t1"}',
        '{"event": "result", "id": "a::t1", "outcome": "passed", "duration": 0.1}',
        '{"event": "start", "id": "a::t2"}',
        '{"event": "finish", "exitstatus": 2, "stopped": "pytest.exit(\'bye\') was called"}',
    ]
    report = report_from_events(lines)
    assert (report.ended_early, report.in_flight, report.finished) == (
        "pytest.exit('bye') was called",
        ("a::t2",),
        True,
    )
    planned = ["a::t1", "a::t2", "b::t3"]
    verdict = decide(shard_index=1, shard_name="s", planned=planned, runs=[run(rc=2, report=report)], policy=Policy())
    assert verdict.status is ShardStatus.FAILED
    ended = "pytest ended the session early (pytest.exit('bye') was called)"
    assert verdict.problems == (f"{ended}; 2 planned items were never reported, in 2 files, first: a::t2",)
    messages = {c.test_id: c.message for c in verdict.cases}
    assert messages == {"a::t1": "", "a::t2": f"was running: {ended}", "b::t3": f"not run: {ended}"}
    # nothing reported at all: the cause, not "zero tests executed"
    alone = Report(ended_early="stopping after 1 failures", in_flight=("a::t1",), finished=True)
    nothing = decide(shard_index=1, shard_name="s", planned=planned, runs=[run(rc=1, report=alone)], policy=Policy())
    assert nothing.reason.startswith("pytest ended the session early (stopping after 1 failures); 3 planned items")


@pytest.mark.parametrize(
    ("rc", "signum", "how"), [(1, None, "exit code 1"), (None, 11, "killed by signal 11 (SIGSEGV)")]
)
def test_a_process_that_died_inside_a_test_names_that_test(rc: int | None, signum: int | None, how: str) -> None:
    # a test started, never reported, and no finish event: the process died inside it (os._exit, a crash)
    report = Report(cases=(case("a::t1"),), in_flight=("a::t2",))
    died = Run(rerun=0, items=(), exit_code=rc, signal=signum, report=report)
    verdict = decide(shard_index=1, shard_name="s", planned=["a::t1", "a::t2", "a::t3"], runs=[died], policy=Policy())
    cause = f"the test process died inside a::t2 ({how}, before pytest's session ended)"
    assert verdict.reason == f"{cause}; 2 planned items were never reported, in 1 file, first: a::t2"
    assert {c.test_id: c.message for c in verdict.cases if c.test_id != "a::t1"} == {
        "a::t2": f"was running: {cause}",
        "a::t3": f"not run: {cause}",
    }
    # the same run under the shard's deadline is the deadline's, not a death of its own
    timed = decide(
        shard_index=1,
        shard_name="s",
        planned=["a::t1", "a::t2"],
        runs=[Run(rerun=0, items=(), exit_code=None, signal=9, report=report, timed_out=True)],
        policy=Policy(),
    )
    assert timed.status is ShardStatus.TIMED_OUT and "died inside" not in " ".join(timed.problems)
    # what its output says ended it (run.exit_causes: pytest-timeout's thread method) is said with the exit
    named = Run(rerun=0, items=(), exit_code=rc, signal=signum, report=report, exit_cause="pytest-timeout's …")
    verdict = decide(shard_index=1, shard_name="s", planned=["a::t1", "a::t2"], runs=[named], policy=Policy())
    assert verdict.reason.startswith(f"the test process died inside a::t2 ({how}: pytest-timeout's …, before")


def test_zero_tests_executed_says_what_the_output_names_as_the_cause() -> None:
    # each shard of a discovery plan given a node id that names nothing in its file stops at pytest's usage error
    # (conformance run 10); the reason said "zero tests executed" without it
    cause = "pytest stopped at a usage error before any test ran: not found: /p/a.py::TestNo"
    stopped = Run(rerun=0, items=(), exit_code=4, signal=None, report=Report(), exit_cause=cause)
    verdict = decide(shard_index=1, shard_name="s", planned=["a.py"], runs=[stopped], policy=Policy())
    assert verdict.status is ShardStatus.FAILED
    assert verdict.reason == f"zero tests executed: {cause}"


# ---- options and helpers


@pytest.mark.parametrize(("text", "seconds"), [("30m", 1800), ("10s", 10), ("1.5h", 5400), ("500ms", 0.5), ("7", 7)])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_parse_duration_and_signal_reject_garbage() -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse_duration("soon")
    with pytest.raises(argparse.ArgumentTypeError):
        parse_signal("SIGNOPE")
    assert parse_signal("term") == 15


def test_auto_jobs_is_bounded_by_cores_memory_and_shards() -> None:
    assert auto_jobs(8, cores=4, memory=16 << 30, job_memory=1 << 30) == 4
    assert auto_jobs(8, cores=4, memory=2 << 30, job_memory=1 << 30) == 2
    assert auto_jobs(3, cores=16, memory=None, job_memory=1 << 30) == 3
    assert auto_jobs(3, cores=4, memory=100, job_memory=1 << 30) == 1
    assert parse_size("512M") == 512 << 20


def test_available_memory_honours_a_cgroup_v2_limit(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "meminfo").write_text("MemTotal: 33554432 kB\nMemAvailable: 16777216 kB\n")
    (proc / "self" / "cgroup").write_text("0::/ci/job\n")
    group = tmp_path / "cg" / "ci" / "job"
    group.mkdir(parents=True)
    (group / "memory.max").write_text(str(3 << 30))
    (group / "memory.current").write_text(str(1 << 30))
    assert available_memory(proc, tmp_path / "cg") == 2 << 30
    (group / "memory.max").write_text("max\n")
    assert available_memory(proc, tmp_path / "cg") == 16 << 30


def test_read_tail_strips_ansi_and_keeps_the_end(tmp_path: Path) -> None:
    log = tmp_path / "output.log"
    log.write_bytes(b"early\n" * 50_000 + b"\x1b[31mred\x1b[0m end\n")
    tail = read_tail(log, 1024)
    assert tail.endswith("red end\n")
    assert "\x1b" not in tail
    assert len(tail) <= 1024


def test_read_tail_since_an_offset_keeps_that_runs_first_line(tmp_path: Path) -> None:
    log = tmp_path / "output.log"
    log.write_bytes(b"an earlier run\n" * 1_000)
    offset = log.stat().st_size
    with log.open("ab") as handle:
        handle.write(b"==> this run\nFAIL last\n")
    assert read_tail(log, 1024, since=offset) == "==> this run\nFAIL last\n"  # nothing of the run before it
    assert read_tail(log, 12, since=offset) == "FAIL last\n"  # cut inside it: the partial line goes


def test_a_collection_error_alone_is_no_unverified_shard() -> None:
    error = CaseResult(test_id="a.py", name="a.py", file="a.py", outcome=CaseOutcome.ERROR, type="collection error")
    broken = Run(rerun=0, items=("a.py::t1",), exit_code=1, signal=None, report=Report(collect_errors=(error,)))
    verdict = decide(shard_index=1, shard_name="s", planned=["a.py::t1"], runs=[broken], policy=Policy())
    assert verdict.status is ShardStatus.FAILED
    assert verdict.reason.startswith("1 collection error:")
    assert "name none of" not in verdict.reason
    # the error fails the shard; the planned test under it is left out, as pytest counts only the error
    assert verdict.not_run == ()
    assert [(c.test_id, c.counted_as) for c in verdict.cases if c.test_id == "a.py::t1"] == [("a.py::t1", LEFT_OUT)]


def test_a_collection_error_another_shard_tells_is_no_error_here_but_explains_the_exit_code() -> None:
    # a file named as an argument (``-- --continue-on-collection-errors t/test_a.py t/test_d.py``) is collected by
    # every shard, whatever ``pytest_ignore_collect`` says; its error is the one of the shard that runs its tests
    lines = [
        '{"event": "collect-error", "id": "t/test_d.py", "elsewhere": true}',
        '{"event": "collected", "ids": ["t/test_a.py::t1"], "deselected": [], "not_collected": []}',
        '{"event": "result", "id": "t/test_a.py::t1", "outcome": "passed", "duration": 0.5}',
    ]
    report = report_from_events(lines)
    assert (report.collect_errors, report.collect_errors_elsewhere) == ((), ("t/test_d.py",))
    ran = run(rc=1, report=report)
    verdict = decide(shard_index=2, shard_name="s", planned=["t/test_a.py::t1"], runs=[ran], policy=Policy())
    assert verdict.status is ShardStatus.PASSED, verdict.reason
    assert [(c.test_id, c.outcome) for c in verdict.cases] == [("t/test_a.py::t1", CaseOutcome.PASSED)]


@pytest.mark.parametrize(
    ("collector", "planned", "cause"),
    [
        ("a.py", ["a.py::t1", "a.py::t2"], "not collected: a.py failed to collect"),  # a file the plan cut
        ("a.py::TestB", ["a.py::TestB::t1"], "not collected: a.py::TestB failed to collect"),  # a class in it
        ("sub", ["sub/b.py", "sub/deeper/c.py::t"], "not collected: sub failed to collect"),  # a folder's conftest
        ("sub", ["subway/b.py"], "planned but never reported"),  # not under it
    ],
)
def test_a_planned_item_whose_collector_failed_says_so(collector: str, planned: list[str], cause: str) -> None:
    # under a collector that failed, a planned item is left out with that cause, as pytest counts the error alone;
    # one under no failed collector is a test that never ran
    error = CaseResult(test_id=collector, name=collector, outcome=CaseOutcome.ERROR, type=COLLECTION_ERROR_TYPE)
    broken = Run(rerun=0, items=tuple(planned), exit_code=1, signal=None, report=Report(collect_errors=(error,)))
    verdict = decide(shard_index=1, shard_name="s", planned=planned, runs=[broken], policy=Policy())
    under = cause.startswith("not collected")
    assert verdict.not_run == (() if under else tuple(planned))
    cases = {c.test_id: c for c in verdict.cases if c.test_id in planned}
    assert all(c.message.startswith(cause) for c in cases.values()), cases
    assert {c.counted_as for c in cases.values()} == ({LEFT_OUT} if under else {"error"})


def test_run_counts_every_reported_test_by_outcome_in_agreeing_words():
    def case(outcome: CaseOutcome, type_: str = "") -> CaseResult:
        return CaseResult(test_id="t.py::x", name="x", outcome=outcome, type=type_)

    assert tally([case(CaseOutcome.PASSED), case(CaseOutcome.ERROR)]) == (
        "2 tests run: 1 passed, 0 failed, 1 error, 0 skipped"
    )
    cases = [
        case(CaseOutcome.PASSED),
        case(CaseOutcome.PASSED, XPASSED_TYPE),
        case(CaseOutcome.SKIPPED),
        case(CaseOutcome.SKIPPED, XFAILED_TYPE),
        case(CaseOutcome.FAILED, "pytest"),
    ]
    assert tally(cases) == "5 tests run: 1 passed, 1 failed, 0 errors, 1 skipped, 1 xfailed, 1 xpassed"
    assert tally([case(CaseOutcome.SKIPPED)]) == "1 test run: 0 passed, 0 failed, 0 errors, 1 skipped"


def test_a_path_given_as_the_command_is_told_to_take_pytest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `ci-shards local --discover -- tests`: without --pytest the words after -- are a command, and "command
    # not found" alone left the user to guess that
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    missing = FileNotFoundError(2, "No such file or directory")
    assert start_error_message(["tests"], missing) == (
        "cannot start 'tests': a folder, not a command: give --pytest to run pytest with the words after --"
    )
    denied = PermissionError(13, "Permission denied")
    assert start_error_message(["tests/test_a.py"], denied).startswith("cannot start 'tests/test_a.py': a file, not")
    assert start_error_message(["nosuch"], missing) == "cannot start 'nosuch': command not found"
