"""How many pytest-xdist workers one shard runs: ``--workers K|auto`` (docs/run.md#workers).

``auto`` is what the machine really gives, not ``os.cpu_count()`` (which counts the host's CPUs, not
the container's): the CPUs of this process's affinity mask (``os.sched_getaffinity``, what taskset or
a cpuset leaves), capped by the cgroup v2 CPU quota (``cpu.max``: ``QUOTA PERIOD``, or ``max``; a
Docker ``--cpus 2`` is ``200000 100000``; kernel docs, admin-guide/cgroup-v2.rst "cpu.max"), capped
by memory (cgroup v2 ``memory.max`` - ``memory.current``, else ``MemAvailable``) over a per-worker
budget (``--worker-memory``, as ``local --jobs auto`` budgets its jobs), and never more workers than
the shard has scopes to hand out: pytest-xdist's ``--dist loadfile`` gives each worker whole files
(a file the plan cut is one scope in each shard it is in), so a worker beyond the shard's files
would idle (xdist shuts it down, "Shutting down N nodes", after paying its start-up).

``choose_workers`` is pure over the files' contents (``MachineFiles``); ``read_machine`` is the thin
reader of this machine's.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ci_shards.common.errors import UsageError

AUTO: Final = "auto"
XDIST: Final = "pytest-xdist"
DEFAULT_WORKER_MEMORY: Final = 1 << 30


@dataclass(frozen=True, kw_only=True)
class MachineFiles:
    """What the machine says about its CPUs and memory (None: the file or call is not there)."""

    affinity: int | None = None  # CPUs in this process's affinity mask
    cpu_count: int | None = None  # os.cpu_count(): only when there is no affinity mask (macOS)
    cpu_max: str | None = None  # this cgroup's cpu.max
    # the ancestors' cpu.max, (group path, text), parent first: a quota anywhere above caps this group too
    ancestor_cpu_max: tuple[tuple[str, str], ...] = ()
    memory_max: str | None = None  # this cgroup's memory.max
    memory_current: str | None = None  # this cgroup's memory.current
    meminfo: str | None = None  # /proc/meminfo


@dataclass(frozen=True)
class WorkerChoice:
    """The workers a shard runs and the one line that says why."""

    count: int
    reason: str


def parse_workers(text: str | None, *, what: str = "--workers") -> int | None:
    """``K`` (a whole number ≥ 1) or ``auto`` (None); None given is 1."""
    if text is None:
        return 1
    value = str(text).strip().lower()
    if value == AUTO:
        return None
    if not value.isdigit() or int(value) < 1:
        msg = f"{what} {text!r}: expected auto or a whole number of workers ≥ 1"
        raise UsageError(msg)
    return int(value)


def quota_cpus(cpu_max: str | None) -> int | None:
    """Whole CPUs the cgroup's ``cpu.max`` allows (at least 1), None when unlimited or unreadable."""
    fields = (cpu_max or "").split()
    if len(fields) != 2 or fields[0] == "max":
        return None
    try:
        quota, period = int(fields[0]), int(fields[1])
    except ValueError:
        return None
    if quota <= 0 or period <= 0:
        return None
    return max(1, math.floor(quota / period))


def effective_quota(files: MachineFiles) -> tuple[int, str] | None:
    """The tightest CPU quota of this cgroup and its ancestors, and which file set it: cgroup v2 limits
    nest, a child's usage counts against every ancestor's ``cpu.max`` (kernel docs, admin-guide/cgroup-v2.rst,
    "Resource distribution models": limits), so the effective one is their minimum. None: no quota anywhere."""
    found: tuple[int, str] | None = None
    own = [("", files.cpu_max)] if files.cpu_max is not None else []
    for group, text in [*own, *files.ancestor_cpu_max]:
        quota = quota_cpus(text)
        if quota is not None and (found is None or quota < found[0]):
            found = (quota, f"{f'{group} ' if group else ''}cpu.max {(text or '').strip()}")
    return found


def available_memory(files: MachineFiles) -> int | None:
    """Bytes free for new processes: ``MemAvailable``, capped by the cgroup's ``memory.max`` headroom."""
    available: int | None = None
    for line in (files.meminfo or "").splitlines():
        if line.startswith("MemAvailable:"):
            with contextlib.suppress(ValueError, IndexError):
                available = int(line.split()[1]) * 1024
    limit = (files.memory_max or "").strip()
    if limit and limit != "max":
        with contextlib.suppress(ValueError):
            headroom = max(0, int(limit) - int((files.memory_current or "0").strip()))
            available = headroom if available is None else min(available, headroom)
    return available


def choose_workers(requested: int | None, files: MachineFiles, *, worker_memory: int, scopes: int) -> WorkerChoice:
    """``requested`` workers (None: auto), and why; auto is min(CPUs, memory / budget, scopes), at least 1."""
    if requested is not None:
        return WorkerChoice(requested, f"workers {requested} (--workers {requested})")
    parts: list[str] = []
    cpus = files.affinity if files.affinity is not None else files.cpu_count or 1
    parts.append(f"{cpus} CPUs in the affinity mask" if files.affinity is not None else f"{cpus} CPUs")
    capped = effective_quota(files)
    if capped is not None:
        quota, where = capped
        parts.append(f"cgroup {where} = {quota}")
        cpus = min(cpus, quota)
    count = cpus
    memory = available_memory(files)
    if memory is not None:
        by_memory = max(1, memory // worker_memory)
        parts.append(f"{_gib(memory)} free / {_gib(worker_memory)} per worker = {by_memory}")
        count = min(count, by_memory)
    parts.append(f"{scopes} file{'' if scopes == 1 else 's'}")
    count = max(1, min(count, scopes))
    return WorkerChoice(count, f"workers {count} (auto: {', '.join(parts)})")


def local_jobs(jobs: int, workers_text: str | None, *, cpus: int, given: bool) -> tuple[int, str | None]:
    """Shards ``local`` runs at once when each starts K workers (``workers_text``; auto takes every CPU), and the
    warning to say: J shards x K workers above the CPUs only make the workers wait for each other, and each
    shard's estimate assumes its K workers have K CPUs. ``--jobs auto`` (``given`` False) is capped to
    ``cpus // K``; a ``--jobs J`` given is kept (the user may know better: I/O-bound tests) but warned of."""
    requested = parse_workers(workers_text)
    per_shard = cpus if requested is None else requested
    if per_shard <= 1 or jobs * per_shard <= cpus:
        return jobs, None
    fitting = max(1, cpus // per_shard)
    told = f"--workers {workers_text}" + ("" if requested is not None else f" ({cpus} CPUs each)")
    if not given:
        why = f"--jobs auto: {fitting} shard{'s' if fitting > 1 else ''} at a time, not {jobs}: {told} per shard"
        return fitting, f"{why} on {cpus} CPUs (more at once would oversubscribe them)"
    msg = f"--jobs {jobs} x {told} = {jobs * per_shard} workers on {cpus} CPUs: oversubscribed, the workers"
    return jobs, f"{msg} wait for each other and the estimates will not hold; --jobs {fitting} fits"


def _gib(size: int) -> str:
    return f"{size / (1 << 30):.1f} GiB"


def read_machine(proc: Path = Path("/proc"), cgroup_root: Path = Path("/sys/fs/cgroup")) -> MachineFiles:
    """This machine's ``MachineFiles`` (the thin edge: every read may fail, and then says nothing)."""
    affinity: int | None = None
    with contextlib.suppress(AttributeError, OSError):
        affinity = len(os.sched_getaffinity(0))
    group: Path | None = None
    with contextlib.suppress(OSError, StopIteration):
        # cgroup v2: a single "0::/path" line (kernel docs, admin-guide/cgroup-v2.rst)
        lines = (proc / "self" / "cgroup").read_text().splitlines()
        group = cgroup_root / next(line[3:] for line in lines if line.startswith("0::")).lstrip("/")
    return MachineFiles(
        affinity=affinity,
        cpu_count=None if affinity is not None else os.cpu_count(),
        cpu_max=_read(group / "cpu.max") if group else None,
        ancestor_cpu_max=_ancestors_cpu_max(group, cgroup_root) if group else (),
        memory_max=_read(group / "memory.max") if group else None,
        memory_current=_read(group / "memory.current") if group else None,
        meminfo=_read(proc / "meminfo"),
    )


def _ancestors_cpu_max(group: Path, cgroup_root: Path) -> tuple[tuple[str, str], ...]:
    """cpu.max of each ancestor of ``group`` below ``cgroup_root``, parent first (the root group has none)."""
    found: list[tuple[str, str]] = []
    for parent in group.parents:
        if parent == cgroup_root or cgroup_root not in parent.parents:
            break
        text = _read(parent / "cpu.max")
        if text is not None:
            found.append(("/" + parent.relative_to(cgroup_root).as_posix(), text))
    return tuple(found)


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def xdist_refusal(requested: int, *, has_xdist: bool, xdist_off: str, python: str) -> str:
    """Why ``requested`` workers cannot run (a usage error's words), "" when they can: one worker needs no
    pytest-xdist; more need it installed in ``python`` and not turned off by pytest's words (``xdist_off``)."""
    if requested <= 1 or (has_xdist and not xdist_off):
        return ""
    why = _no_xdist(xdist_off, python)
    remedy = "drop it" if xdist_off else f"install {XDIST} into the environment the tests run in"
    asked = f"(the plan or the flag asks for {requested} workers)"
    return f"--workers {requested}: {why} {asked}: {remedy}, or use --workers 1"


def _no_xdist(xdist_off: str, python: str) -> str:
    """Why pytest-xdist cannot run the workers: pytest's words turn it off, or ``python`` has none."""
    return f"'{xdist_off}' among pytest's options turns {XDIST} off" if xdist_off else f"{python} has no {XDIST}"


def xdist_turned_off(cwd: Path, env: Mapping[str, str], arguments: Sequence[str]) -> str:
    """``-p no:xdist`` when the project's addopts, PYTEST_ADDOPTS or the pytest ``arguments`` give it, else ""."""
    from ci_shards.plan.discover import find_settings  # noqa: PLC0415 (the plan stage's reader: only for K > 1)
    from ci_shards.plan.pytest_args import env_addopts, xdist_blocked  # noqa: PLC0415 (likewise)

    return xdist_blocked([*find_settings(cwd).addopts, *env_addopts(env), *arguments])


def shard_workers(
    given: str | None,
    *,
    planned: int,
    has_xdist: bool,
    machine: MachineFiles,
    worker_memory: int,
    scopes: int,
    python: str,
    xdist_off: str = "",
) -> tuple[WorkerChoice, list[str]]:
    """The workers one ``run --pytest`` shard starts, and the warnings to say: ``given`` (``--workers``,
    None: the plan's ``planned``). Without pytest-xdist, or with pytest's words turning it off (``xdist_off``:
    ``-p no:xdist``), K > 1 is a usage error naming the package or the words, and ``auto`` falls back to 1;
    another K than the plan's is a warning (its estimates assume ``planned``)."""
    requested = parse_workers(given) if given is not None else planned
    choice = choose_workers(requested, machine, worker_memory=worker_memory, scopes=scopes)
    if given is None and planned > 1:
        choice = WorkerChoice(planned, f"workers {planned} (the plan's)")
    warnings: list[str] = []
    if choice.count > 1 and (xdist_off or not has_xdist):
        if requested is not None:
            raise UsageError(xdist_refusal(requested, has_xdist=has_xdist, xdist_off=xdist_off, python=python))
        warnings.append(f"--workers auto: {_no_xdist(xdist_off, python)}; running 1 worker")
        choice = WorkerChoice(1, f"workers 1 (auto: {XDIST} off)" if xdist_off else f"workers 1 (auto: no {XDIST})")
    if choice.count != planned:
        warnings.append(
            f"{choice.count} worker{'s' if choice.count > 1 else ''}, but the plan was made for {planned}:"
            f" its estimates assume {planned}"
        )
    return choice, warnings
