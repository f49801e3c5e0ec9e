"""Run one ``ci-shards`` command in this process and SIGKILL it at a named moment: a CI machine lost,
an OOM kill, a cancelled job, at the worst time. Used by tests/e2e/run/test_killed.py and
benchmarks/faults.py; run as a script so it imports nothing from the test tree:

    python tests/e2e/run/kill_harness.py MOMENT ci-shards-args...

MOMENT is one of

- ``none``: no kill (the same process setup, for a clean reference run);
- ``before-command``: when the runner starts the shard's test command (``subprocess.Popen``), before
  pytest exists;
- ``mid-test``: nothing here; a test of the project kills ``$CI_SHARDS_FAULT_PID`` (this process) and
  its own process group when ``$CI_SHARDS_FAULT`` says ``mid-test``;
- ``writing:NAME``: when a file named NAME is put in place (``os.replace`` onto it, the last step of
  ``ci_shards.common.outfile.atomic``): its temp file is cut to half its bytes, then the process is killed,
  which is what a kill during the write itself leaves on disk. A writer that does not replace
  (writes in place) is not stopped: the command then runs to its end, which a test sees.

The kill is a real SIGKILL of this process (no handler, no cleanup, no ``finally``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any


def _die() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _kill_when_replacing(name: str) -> None:
    original = os.replace

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if Path(os.fsdecode(dst)).name == name:
            size = os.path.getsize(src)
            os.truncate(src, size // 2)
            _die()
        original(src, dst, *args, **kwargs)

    os.replace = replace  # type: ignore[assignment]


def _kill_when_starting_the_command() -> None:
    original = subprocess.Popen.__init__

    def init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        if "pytest" in " ".join(map(str, args if isinstance(args, list | tuple) else [args])):
            _die()
        original(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = init  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    moment, args = argv[0], argv[1:]
    os.environ["CI_SHARDS_FAULT"] = moment
    os.environ["CI_SHARDS_FAULT_PID"] = str(os.getpid())
    if moment.startswith("writing:"):
        _kill_when_replacing(moment.removeprefix("writing:"))
    elif moment == "before-command":
        _kill_when_starting_the_command()
    elif moment not in {"none", "mid-test"}:
        print(f"kill_harness: unknown moment {moment!r}", file=sys.stderr)
        return 2
    from ci_shards.cli import main as ci_shards  # noqa: PLC0415 - after the patches

    return ci_shards(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
