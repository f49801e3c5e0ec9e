"""run/workers.py: ``--workers auto`` from the machine's files (given as fixtures), and the shard's choice."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ci_shards.common.errors import UsageError
from ci_shards.plan.pytest_args import xdist_blocked
from ci_shards.run.workers import (
    MachineFiles,
    available_memory,
    choose_workers,
    effective_quota,
    local_jobs,
    parse_workers,
    quota_cpus,
    read_machine,
    shard_workers,
)

GIB = 1 << 30
MEMINFO_8G = "MemTotal:       16000000 kB\nMemAvailable:    8388608 kB\n"


def test_a_cpu_max_quota_caps_the_affinity_mask() -> None:
    files = MachineFiles(affinity=8, cpu_max="200000 100000\n", meminfo=MEMINFO_8G)
    choice = choose_workers(None, files, worker_memory=GIB, scopes=40)
    assert choice.count == 2
    assert "8 CPUs in the affinity mask" in choice.reason
    assert "cgroup cpu.max 200000 100000 = 2" in choice.reason


def test_a_fractional_quota_rounds_down_but_never_to_zero() -> None:
    assert quota_cpus("150000 100000") == 1
    assert quota_cpus("50000 100000") == 1
    assert quota_cpus("max 100000") is None
    assert quota_cpus("garbage") is None
    assert quota_cpus(None) is None


def test_memory_max_headroom_caps_the_workers() -> None:
    files = MachineFiles(
        affinity=16, cpu_max="max 100000", memory_max=str(3 * GIB), memory_current=str(GIB // 2), meminfo=MEMINFO_8G
    )
    assert available_memory(files) == 3 * GIB - GIB // 2
    choice = choose_workers(None, files, worker_memory=GIB, scopes=40)
    assert choice.count == 2  # 2.5 GiB free / 1 GiB each
    assert "2.5 GiB free / 1.0 GiB per worker = 2" in choice.reason


def test_no_cgroup_uses_the_affinity_mask_and_mem_available() -> None:
    files = MachineFiles(affinity=4, meminfo=MEMINFO_8G)
    choice = choose_workers(None, files, worker_memory=GIB, scopes=40)
    assert choice.count == 4
    assert "cpu.max" not in choice.reason


def test_never_more_workers_than_the_shard_has_files() -> None:
    files = MachineFiles(affinity=8)
    assert choose_workers(None, files, worker_memory=GIB, scopes=3).count == 3
    assert choose_workers(None, files, worker_memory=GIB, scopes=0).count == 1


def test_a_number_is_taken_as_given() -> None:
    choice = choose_workers(3, MachineFiles(affinity=1), worker_memory=GIB, scopes=1)
    assert (choice.count, choice.reason) == (3, "workers 3 (--workers 3)")


@pytest.mark.parametrize("text", ["0", "-1", "two", "1.5", ""])
def test_bad_worker_counts_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="--workers"):
        parse_workers(text)


def test_parse_workers() -> None:
    assert parse_workers("auto") is None
    assert parse_workers("AUTO") is None
    assert parse_workers("4") == 4
    assert parse_workers(None) == 1


def _shard(
    given: str | None, *, planned: int = 1, has_xdist: bool = True, xdist_off: str = ""
) -> tuple[int, str, list[str]]:
    choice, warnings = shard_workers(
        given,
        planned=planned,
        has_xdist=has_xdist,
        machine=MachineFiles(affinity=4),
        worker_memory=GIB,
        scopes=10,
        python="/venv/bin/python",
        xdist_off=xdist_off,
    )
    return choice.count, choice.reason, warnings


def test_without_xdist_a_number_above_one_names_the_package() -> None:
    with pytest.raises(UsageError, match="pytest-xdist"):
        _shard("2", has_xdist=False)
    with pytest.raises(UsageError, match="pytest-xdist"):
        _shard(None, planned=2, has_xdist=False)  # the plan's K asks for it too


def test_without_xdist_auto_falls_back_to_one_with_one_line() -> None:
    count, _reason, warnings = _shard("auto", has_xdist=False)
    assert count == 1
    assert warnings == ["--workers auto: /venv/bin/python has no pytest-xdist; running 1 worker"]


def test_xdist_turned_off_by_pytests_words_is_named_as_a_missing_package_is() -> None:
    # installed, but `-p no:xdist` in the arguments or addopts: every shard's pytest would stop at "-n" unknown
    with pytest.raises(UsageError, match=r"--workers 2: '-p no:xdist' among pytest's options turns pytest-xdist off"):
        _shard("2", xdist_off="-p no:xdist")
    with pytest.raises(UsageError, match="drop it, or use --workers 1"):
        _shard(None, planned=2, xdist_off="-p no:xdist")
    count, reason, warnings = _shard("auto", xdist_off="-p no:xdist")
    assert (count, reason) == (1, "workers 1 (auto: pytest-xdist off)")
    assert warnings == ["--workers auto: '-p no:xdist' among pytest's options turns pytest-xdist off; running 1 worker"]
    assert _shard("1", has_xdist=False, xdist_off="-p no:xdist")[0] == 1  # one worker needs no xdist


@pytest.mark.parametrize(
    ("words", "blocked"),
    [
        (["-p", "no:xdist"], "-p no:xdist"),
        (["-pno:xdist", "tests"], "-p no:xdist"),
        (["-p", "no:xdist.plugin"], "-p no:xdist.plugin"),
        (["-p", "xdist"], ""),
        (["-p", "no:randomly", "-n", "2"], ""),
        (["-k", "-p no:xdist"], ""),  # an option's value, not pytest's -p
        ([], ""),
    ],
)
def test_xdist_blocked_reads_p_as_pytest_does(words: list[str], blocked: str) -> None:
    assert xdist_blocked(words) == blocked


def test_another_k_than_the_plans_is_a_warning() -> None:
    count, _reason, warnings = _shard("3", planned=2)
    assert count == 3
    assert warnings == ["3 workers, but the plan was made for 2: its estimates assume 2"]
    count, reason, warnings = _shard(None, planned=2)
    assert (count, reason, warnings) == (2, "workers 2 (the plan's)", [])


def test_read_machine_reads_the_process_cgroup(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "cgroup").write_text("0::/ci/job\n")
    (proc / "meminfo").write_text(MEMINFO_8G)
    group = tmp_path / "cg" / "ci" / "job"
    group.mkdir(parents=True)
    (group / "cpu.max").write_text("300000 100000\n")
    (group / "memory.max").write_text("max\n")
    files = read_machine(proc, tmp_path / "cg")
    assert quota_cpus(files.cpu_max) == 3
    assert available_memory(files) == 8 * GIB
    assert read_machine(tmp_path / "nothing", tmp_path / "none").cpu_max is None


def _cgroup_tree(tmp_path: Path, quotas: dict[str, str]) -> MachineFiles:
    """A cgroup v2 tree under tmp_path/cg with ``cpu.max`` where ``quotas`` says, the process in /ci/job/step."""
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "cgroup").write_text("0::/ci/job/step\n")
    (proc / "meminfo").write_text(MEMINFO_8G)
    for group in ("ci", "ci/job", "ci/job/step"):
        (tmp_path / "cg" / group).mkdir(parents=True, exist_ok=True)
    for group, text in quotas.items():
        (tmp_path / "cg" / group.strip("/") / "cpu.max").write_text(text)
    return read_machine(proc, tmp_path / "cg")


def test_an_ancestor_s_quota_caps_a_group_with_none(tmp_path: Path) -> None:
    files = _cgroup_tree(
        tmp_path, {"/ci/job/step": "max 100000\n", "/ci/job": "max 100000\n", "/ci": "200000 100000\n"}
    )
    assert files.ancestor_cpu_max == (("/ci/job", "max 100000\n"), ("/ci", "200000 100000\n"))
    choice = choose_workers(None, replace(files, affinity=8), worker_memory=GIB, scopes=40)
    assert choice.count == 2
    assert "cgroup /ci cpu.max 200000 100000 = 2" in choice.reason


def test_the_tightest_quota_on_the_path_wins_wherever_it_is(tmp_path: Path) -> None:
    files = _cgroup_tree(tmp_path, {"/ci/job/step": "400000 100000\n", "/ci/job": "100000 100000\n", "/ci": "max\n"})
    assert effective_quota(files) == (1, "/ci/job cpu.max 100000 100000")
    own = MachineFiles(cpu_max="100000 100000", ancestor_cpu_max=(("/ci", "300000 100000"),))
    assert effective_quota(own) == (1, "cpu.max 100000 100000")
    assert effective_quota(MachineFiles(ancestor_cpu_max=(("/a", "max 100000"), ("/b", "junk")))) is None


def test_the_walk_stops_at_the_cgroup_root(tmp_path: Path) -> None:
    (tmp_path / "cg").mkdir()
    (tmp_path / "cg" / "cpu.max").write_text("100000 100000\n")  # not a real root file: never read
    files = _cgroup_tree(tmp_path, {})
    assert files.cpu_max is None
    assert files.ancestor_cpu_max == ()


def test_local_jobs_times_workers_never_oversubscribe_unasked() -> None:
    assert local_jobs(4, "1", cpus=2, given=False) == (4, None)  # one worker each: --jobs as before
    assert local_jobs(1, "2", cpus=2, given=False) == (1, None)
    jobs, why = local_jobs(2, "2", cpus=2, given=False)
    assert jobs == 1 and why is not None
    assert why.startswith("--jobs auto: 1 shard at a time, not 2: --workers 2 per shard on 2 CPUs")
    jobs, why = local_jobs(3, "auto", cpus=4, given=False)
    assert jobs == 1 and why is not None and "--workers auto (4 CPUs each)" in why


def test_a_given_jobs_is_kept_and_warned_of() -> None:
    jobs, why = local_jobs(3, "2", cpus=4, given=True)
    assert jobs == 3 and why is not None
    assert why.startswith("--jobs 3 x --workers 2 = 6 workers on 4 CPUs: oversubscribed")
    assert why.endswith("--jobs 2 fits")
    assert local_jobs(2, "2", cpus=4, given=True) == (2, None)
