"""One child process tree under a hard wall-clock limit: spawn, spool, deadline, signals, leaks.

The child runs in its own session (so one ``killpg`` reaches its group) with stdin closed, and its
stdout+stderr go straight to an open file: there is no pipe, so a grandchild that keeps the output
open can never block us and memory stays flat however much is written (executor.md §6.4, LAB E).

On Linux ci-shards makes itself the child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``, man7
PR_SET_CHILD_SUBREAPER(2const)): descendants that escaped the group with ``setsid`` and lost their
parent are re-parented to us instead of init, so a scan of ``/proc/*/stat`` by parent pid still
finds every one of them and they can be killed. Other platforms fall back to the process group.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final

PR_SET_CHILD_SUBREAPER: Final = 36  # <linux/prctl.h>
# how often the wait loop looks at cancellations (signals only mark them); exits and deadlines wake it at once
POLL_SECONDS: Final = 0.1
_PROC = Path("/proc")


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux >= 3.4). False when unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    ppid: int
    state: str
    pgid: int


def _read_stat(pid_dir: Path) -> ProcInfo | None:
    try:
        raw = (pid_dir / "stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses, so split at the last ")"
    head, _, rest = raw.rpartition(")")
    fields = rest.split()
    if not head or len(fields) < 3:
        return None
    return ProcInfo(pid=int(pid_dir.name), state=fields[0], ppid=int(fields[1]), pgid=int(fields[2]))


def process_table() -> dict[int, ProcInfo]:
    if not _PROC.is_dir():
        return {}
    table: dict[int, ProcInfo] = {}
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            info = _read_stat(entry)
            if info is not None:
                table[info.pid] = info
    return table


def descendants(
    root: int, table: Mapping[int, ProcInfo] | None = None, exclude: frozenset[int] = frozenset()
) -> list[ProcInfo]:
    """Every process below ``root`` by parent pid (zombies included), breadth first.

    ``exclude``: pids (with everything below them) that are not ours to touch, e.g. children this
    process already had before it started the shard's command.
    """
    table = process_table() if table is None else table
    children: dict[int, list[ProcInfo]] = {}
    for info in table.values():
        children.setdefault(info.ppid, []).append(info)
    found: list[ProcInfo] = []
    queue = [root]
    while queue:
        for child in children.get(queue.pop(0), []):
            if child.pid in exclude:
                continue
            found.append(child)
            queue.append(child.pid)
    return found


def describe(pid: int) -> str:
    """``pid cmdline`` for reports (cmdline capped)."""
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        raw = b""
    cmd = raw.replace(b"\0", b" ").decode(errors="replace").strip() or "?"
    return f"{pid} {cmd[:200]}"


def _signal_pid(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _reap(pid: int) -> None:
    """Collect a zombie that is our child (re-parented to us as subreaper)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def live_descendants(root: int, exclude: frozenset[int] = frozenset()) -> list[ProcInfo]:
    return [p for p in descendants(root, exclude=exclude) if p.state != "Z"]


def kill_tree(
    root: int, pgid: int | None, *, rounds: int = 100, exclude: frozenset[int] = frozenset(), main: int | None = None
) -> None:
    """SIGKILL the group and every descendant of ``root`` until none is left, reaping our zombies.

    Repeats because a process may fork between the scan and the kill; each round is a fresh scan.
    ``main`` (the command's own process) is killed but never reaped here: its ``Popen`` must
    collect its exit status, or the status is lost (a reaped child reads as exit code 0).
    """
    me = os.getpid()
    for _ in range(rounds):
        if pgid is not None:
            _signal_group(pgid, signal.SIGKILL)
        procs = descendants(root, exclude=exclude)
        for proc in procs:
            if proc.state != "Z":
                _signal_pid(proc.pid, signal.SIGKILL)
        for proc in procs:
            if proc.ppid == me and proc.pid != main:
                _reap(proc.pid)
        if not any(p.state != "Z" for p in descendants(root, exclude=exclude) if p.pid != main):
            break
        time.sleep(0.005)
    for proc in descendants(root, exclude=exclude):
        if proc.ppid == me and proc.state == "Z" and proc.pid != main:
            _reap(proc.pid)


@dataclass
class CancelToken:
    """Set by ci-shards' own signal handlers (CI cancelling the job); polled by ``run_process``.

    The handler only records the signal; the wait loop forwards it, so no work happens inside
    a signal handler.
    """

    signals: list[int] = field(default_factory=list)

    def trigger(self, signum: int) -> None:
        self.signals.append(signum)

    @property
    def cancelled(self) -> bool:
        return bool(self.signals)

    @property
    def first_signal(self) -> int | None:
        return self.signals[0] if self.signals else None


@dataclass(frozen=True, kw_only=True)
class ProcessResult:
    exit_code: int | None = None  # None when the child died from a signal
    signal: int | None = None
    start_error: str = ""  # non-empty: the command could not be started
    timed_out: bool = False
    cancelled: bool = False
    elapsed: float = 0.0
    deadline_to_dead: float | None = None  # seconds from the deadline to a fully dead tree
    leaked: tuple[str, ...] = ()  # "pid cmdline" of descendants left after a normal exit

    @property
    def started(self) -> bool:
        return not self.start_error


@dataclass(frozen=True, kw_only=True)
class Limits:
    deadline: float | None = None  # time.monotonic() value
    graceful_signal: int = signal.SIGINT
    grace: float = 10.0
    cancel_grace: float = 5.0  # GitHub sends SIGTERM 7.5 s after SIGINT (executor.md §6.5)
    leak_timeout: float = 0.5  # nextest's 100 ms gives false positives under load (executor.md §1.4)


def path_not_command(word: str, *, startable: bool = False) -> str:
    """Why ``word``, a test path, is not the command it stands as, or "": ``local --discover -- tests``, where the
    words after -- are a command unless --pytest says they are pytest's. A script that can start (executable,
    with its ``#!``) is a command; ``startable`` says the caller already knows it could not."""
    if os.path.isdir(word):
        kind = "a folder"
    elif word.endswith(".py") and os.path.isfile(word) and (startable or not os.access(word, os.X_OK)):
        kind = "a file"
    else:
        return ""
    return f"{kind}, not a command: give --pytest to run pytest with the words after --"


def start_error_message(argv: Sequence[str], err: OSError) -> str:
    reason = err.strerror or str(err)
    if isinstance(err, FileNotFoundError):
        reason = "command not found"
    reason = path_not_command(argv[0], startable=True) or reason
    return f"cannot start {argv[0]!r}: {reason}"


def run_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None,
    spool: IO[bytes],
    limits: Limits,
    cancel: CancelToken,
) -> ProcessResult:
    """Run ``argv`` to the end, or to the deadline / a cancellation, and leave no process behind."""
    started = time.monotonic()
    spool.flush()
    me = os.getpid()
    # children we already had (another shard's process, a caller's helper) are not this shard's tree
    others = frozenset(p.pid for p in descendants(me) if p.ppid == me)
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=spool,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            env=dict(env),
            cwd=cwd,
        )
    except (OSError, ValueError) as err:
        message = start_error_message(argv, err) if isinstance(err, OSError) else f"cannot start: {err}"
        return ProcessResult(start_error=message, elapsed=time.monotonic() - started)
    try:
        return _supervise(proc, me=me, others=others, limits=limits, cancel=cancel, started=started)
    except BaseException:
        # whatever went wrong here (a bad signal number, KeyboardInterrupt, a bug), no process of
        # this tree may outlive ci-shards: kill it before the error propagates
        kill_tree(me, proc.pid, exclude=others)
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        raise


class _ExitWait:
    """Sleep until the child exits or a timeout passes. On Linux a pidfd of the child becomes readable
    at its exit, so each wait is one ``poll`` call; ``Popen.wait(timeout)`` instead wakes up every
    0.5 to 50 ms to try ``waitpid``, which cost about 1 % of a core for as long as a shard ran."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.pidfd: int | None = None
        self.poller: select.poll | None = None
        with contextlib.suppress(AttributeError, OSError):  # no pidfd_open: not Linux, or Linux < 5.3
            self.pidfd = os.pidfd_open(proc.pid)
            self.poller = select.poll()
            self.poller.register(self.pidfd, select.POLLIN)

    def exited(self, timeout: float) -> bool:
        """True once the child has exited (``proc.returncode`` is set)."""
        if self.poller is None:
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                return False
            return True
        self.poller.poll(max(1, math.ceil(timeout * 1000)))
        return self.proc.poll() is not None

    def close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def _wake_in(*moments: float | None) -> float:
    """Seconds to sleep: until the next deadline or kill moment, at most POLL_SECONDS."""
    now = time.monotonic()
    return min([POLL_SECONDS, *(m - now for m in moments if m is not None)])


def _supervise(
    proc: subprocess.Popen[bytes],
    *,
    me: int,
    others: frozenset[int],
    limits: Limits,
    cancel: CancelToken,
    started: float,
) -> ProcessResult:
    """The wait loop: deadline, forwarded cancellations, then the leak check."""
    pgid = proc.pid
    timed_out = False
    cancelled = False
    handled_signals = 0
    kill_at: float | None = None
    deadline_hit: float | None = None
    waiter = _ExitWait(proc)
    try:
        while not waiter.exited(_wake_in(None if timed_out or cancelled else limits.deadline, kill_at)):
            now = time.monotonic()
            if len(cancel.signals) > handled_signals:
                if handled_signals == 0 and not timed_out:
                    # forward as the graceful signal (pytest writes its report on SIGINT, not on SIGTERM)
                    _signal_group(pgid, limits.graceful_signal)
                    kill_at = now + limits.cancel_grace
                else:  # a second signal: no more patience
                    kill_at = now
                handled_signals = len(cancel.signals)
                cancelled = True
            if not timed_out and not cancelled and limits.deadline is not None and now >= limits.deadline:
                timed_out = True
                deadline_hit = now
                _signal_group(pgid, limits.graceful_signal)
                kill_at = now + limits.grace
            if kill_at is not None and now >= kill_at:
                kill_tree(me, pgid, exclude=others, main=proc.pid)
                kill_at = None
    finally:
        waiter.close()
    leaked: list[str] = []
    if timed_out or cancelled:
        kill_tree(me, pgid, exclude=others)
    else:
        leaked = _handle_leaks(me, pgid, limits.leak_timeout, others)
    dead_at = time.monotonic()
    rc = proc.returncode
    return ProcessResult(
        exit_code=rc if rc >= 0 else None,
        signal=-rc if rc < 0 else None,
        timed_out=timed_out,
        cancelled=cancelled,
        elapsed=dead_at - started,
        deadline_to_dead=(dead_at - deadline_hit) if deadline_hit is not None else None,
        leaked=tuple(leaked),
    )


def _handle_leaks(me: int, pgid: int, leak_timeout: float, others: frozenset[int]) -> list[str]:
    """After a normal exit: give leftovers ``leak_timeout`` to go, then report and kill them."""
    give_up = time.monotonic() + leak_timeout
    remaining = live_descendants(me, others)
    while remaining and time.monotonic() < give_up:
        time.sleep(0.02)
        remaining = live_descendants(me, others)
    leaked = [describe(p.pid) for p in remaining]
    if remaining:
        kill_tree(me, pgid, exclude=others)
    else:
        kill_tree(me, None, rounds=1, exclude=others)  # reap zombies re-parented to us
    return leaked
