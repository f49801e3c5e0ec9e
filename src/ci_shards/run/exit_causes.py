"""Why a test command exited non-zero while its report shows no failure, when its output says so (pure).

The shard fails either way (a non-zero exit is never taken for a pass); what this adds is the cause, in the
shard's reason, where "the command exited with code 1 but its report shows no failure" alone leaves the user
reading output.log. Each rule is a line the tool itself prints, matched on the run's last output.
"""

from __future__ import annotations

import re
from typing import Final

# pytest-cov's gate (pytest_cov/plugin.py: "FAIL Required test coverage of {required}% not reached. Total
# coverage: {total}%"), raised from the project's addopts (arrow 1.4.0: --cov-fail-under=99) or coverage.py's own
# settings (propcache 0.5.4's .coveragerc: fail_under = 50, which pytest-cov takes when no option is given): a
# shard measures only the code its own tests run, so a gate on the whole suite's coverage fails every shard of a
# suite that passes it unsharded (conformance runs 4 and 10, docs/benchmarks.md)
_COV_FAIL_UNDER: Final = re.compile(
    r"^FAIL Required test coverage of (?P<required>[\d.]+)% not reached\. Total coverage: (?P<total>[\d.]+)%",
    re.MULTILINE,
)


# pytest-timeout's thread method (timeout_method = thread, or no SIGALRM): it prints this banner around every
# thread's stack and ends the whole process with os._exit(1), inside the test (pytest_timeout.py, dump_stacks)
_TIMEOUT_BANNER: Final = re.compile(r"\+{10,} Timeout \+{10,}")


# syrupy's snapshot report (syrupy/report.py: "{n} snapshot(s) unused." closing its summary line, after the counts of
# the others): a snapshot is unused when no test of the session used it. A shard runs part of the suite, and syrupy
# owns a snapshot by the test module its file is named after: one a test writes elsewhere (a custom snapshot folder
# or name: syrupy 7.0.1's own tests/examples) is unused on every shard without that test, as under `pytest --ignore`
# of it (conformance run 8, docs/benchmarks.md)
_SNAPSHOTS_UNUSED: Final = re.compile(
    r"^(?:\d+ snapshots? [^.\n]+\. )*(?P<unused>\d+) snapshots? unused\.$", re.MULTILINE
)


# pytest's usage error about a collection argument (_pytest/main.py, its exit 4, before any test runs): a node id that
# names nothing in its file ("ERROR: not found: …::TestNo", "(no match in any of […])" on the next line), a path or a
# --pyargs name that names nothing. A discovery plan cannot tell the first from the file's text, so each shard's
# pytest stops there (conformance run 10)
_USAGE_NOT_FOUND: Final = re.compile(
    r"^ERROR: (?P<what>(?:file or directory |module or package )?not found: .{1,300})$", re.MULTILINE
)


# pytest's usage errors about -m and -k (_pytest/mark/__init__.py, raised in pytest_collection_modifyitems: after
# collection, exit 4, no test run): an expression that does not parse ("Wrong expression passed to '-m': …") and,
# under strict_markers (or pytest 9's strict), a marker in -m that nothing registered ("Unknown marker(s) in '-m'
# expression: …", _validate_marker_names). A discovery plan cannot tell the second from the files' text (plugins and
# conftests' pytest_configure register markers), and leaves the first to pytest, so each shard's pytest stops there
# (conformance run 12: exceptiongroup 1.3.1, whose addopts give --strict-markers, under -m nosuchmark)
_USAGE_EXPRESSION: Final = re.compile(
    r"^ERROR: (?P<what>(?:Wrong expression passed to '-[mk]'|Unknown marker\(s\) in '-m' expression): .{1,300})$",
    re.MULTILINE,
)


def exit_cause(output: str) -> str:
    """The cause the run's ``output`` names for its non-zero exit, in one line ("" when none is known)."""
    if _TIMEOUT_BANNER.search(output):
        return (
            "pytest-timeout's thread method ended the process at the test's timeout (its stacks are in output.log;"
            " timeout_method = signal fails that test alone)"
        )
    gate = _COV_FAIL_UNDER.search(output)
    if gate is not None:
        return (
            f"pytest-cov's coverage gate of {gate['required']}% (--cov-fail-under, or fail_under in coverage.py's"
            f" settings) failed on this shard's {gate['total']}%: a shard covers only the code its own tests run;"
            " give the shards --cov-fail-under=0 (above either) and gate the merged coverage (run --coverage,"
            " aggregate --fail-under: docs/coverage.md)"
        )
    usage = _USAGE_NOT_FOUND.search(output) or _USAGE_EXPRESSION.search(output)
    if usage is not None:
        return f"pytest stopped at a usage error before any test ran: {usage['what']}"
    unused = _SNAPSHOTS_UNUSED.search(output)
    if unused is not None:
        return (
            f"syrupy found {unused['unused']} unused {'snapshot' if unused['unused'] == '1' else 'snapshots'} on"
            " this shard: a shard runs part of the suite, and a snapshot whose test ran on another shard is unused"
            " here when syrupy cannot tell its test from its path (a custom snapshot folder or name); give the"
            " shards --snapshot-warn-unused and check unused snapshots in one whole run, or keep the files that"
            " share the folder together (--keep-together)"
        )
    return ""
