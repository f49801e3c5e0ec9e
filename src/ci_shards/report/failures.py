"""The failures section of the Markdown reports: identical failures grouped, each group a view
the template renders, and how many of them fit GitHub's size limit. Pure.

Also the words for counts that every report shares ("7 failed, 2 errors", "1 test failed").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ci_shards.common.console import count_failures
from ci_shards.model.outcome import Totals
from ci_shards.report import md
from ci_shards.report.frames import restore_first_indent
from ci_shards.report.groups import FailureGroup, interleave, message_of, round_robin

SHARDS_NAMED = 10  # a group names at most this many of its shards, then "…"
_PYTEST_ID = re.compile(r"[^\s:]+\.py(?:::|$)")


def failure_counts(totals: Totals) -> str:
    """How many tests went wrong, as every report says it (``console.count_failures``)."""
    return count_failures(totals.failed, totals.errors)


@dataclass(frozen=True)
class Detail:
    """How much of each failure a report shows."""

    trace_chars: int
    message_chars: int
    ids_per_group: int  # test ids listed under a group, sampled across shards


@dataclass(frozen=True)
class Location:
    """Where a failure points: the failing line, and the test's own (``def``) line when known."""

    failing: str = ""  # "tests/test_a.py:12"
    test: str = ""  # "tests/test_a.py:8"
    file: str = ""  # the test's file (or item) when no line is known


def _shards(group: FailureGroup) -> str:
    shards = group.shards
    named = ", ".join(str(s) for s in shards[:SHARDS_NAMED]) + (", …" if len(shards) > SHARDS_NAMED else "")
    return f"{'shard' if len(shards) == 1 else 'shards'} {named}"


def group_view(group: FailureGroup, detail: Detail, location: Location) -> dict[str, Any]:
    """What the template needs for one group, every text made inert. A group of one is shown as
    that test; a larger one by its count, with its first test's trace and a fair sample of its ids."""
    record = group.first
    first = message_of(record).partition("\n")[0]
    sample = round_robin(group.records, detail.ids_per_group) if group.count > 1 else []
    where = location.failing or location.test or location.file
    also = ""
    if location.failing and location.test not in ("", where):
        also = f" (test at {md.code_inline(location.test)})"
    return {
        "count": group.count,
        "where": _shards(group),
        "kind": record.kind.value,
        "id": md.summary_text(record.test_id, 300),
        "first_id": md.code_inline(record.test_id, 300),
        "message": md.summary_text(first or record.kind.value, detail.message_chars),
        "location": md.code_inline(where) + also if where else "",
        "trace": md.code_block(restore_first_indent(record.text), detail.trace_chars) if record.text.strip() else "",
        "members": [md.code_inline(r.test_id, 300) for r in sample],
        "members_more": group.count - len(sample) if sample else 0,
    }


def fit(views: Sequence[dict[str, Any]], room: int, *, in_bytes: bool, details: int) -> tuple[int, int]:
    """(shown, with_trace): how many groups fit in ``room``, traces for the first ones.

    Traces go to the first groups (at most ``details``) while they take at most 60% of the room;
    then one-line entries fill the rest. Sizes are estimates (the template adds ~60 characters
    per entry and ~6 per listed id); the caller re-checks the real size and shrinks if needed."""
    unit: Callable[[str], int] = (lambda s: len(s.encode())) if in_bytes else len

    def base(view: dict[str, Any]) -> int:
        return unit(view["id"]) + unit(view["message"]) + sum(unit(m) + 6 for m in view["members"]) + 60

    used = with_trace = 0
    for view in views[:details]:
        cost = base(view) + unit(view["trace"]) + unit(view["location"]) + unit(view["first_id"]) + 60
        if used + cost > room * 0.6:
            break
        used += cost
        with_trace += 1
    shown = with_trace
    for view in views[with_trace:]:
        cost = base(view)
        if used + cost > room:
            break
        used += cost
        shown += 1
    return shown, with_trace


_SEPARATOR = " \\\n    "  # one id per line: readable, and a shell reads it as one command


def _quote(word: str) -> str:
    """Always single-quoted (``shlex.quote`` leaves some words bare): inside single quotes a POSIX
    shell expands nothing, and a ``'`` in the word is written as ``'"'"'``."""
    return "'" + word.replace("'", "'\"'\"'") + "'"


PYTEST: Final = "python -m pytest"  # the interpreter of the environment the reader activated, not a stray pytest


def parametrized_base(test_id: str) -> str:
    """``t.py::test_same`` for ``t.py::test_same[3]``; the id itself when it has no parameters."""
    head, _, last = test_id.rpartition("::")
    if not (head and last.endswith("]") and "[" in last):
        return test_id
    return f"{head}::{last.split('[', 1)[0]}"


def cases_by_test(every: Iterable[str]) -> dict[str, set[str]]:
    """The run's ids (``every``) by the parametrized test they are cases of (``parametrized_base``)."""
    cases: dict[str, set[str]] = {}
    for test_id in every:
        cases.setdefault(parametrized_base(test_id), set()).add(test_id)
    return cases


def collapse_parametrized(failing: Sequence[str], cases: Mapping[str, set[str]]) -> list[str]:
    """``failing`` with each parametrized test whose every case (of ``cases``, from ``cases_by_test`` of the
    run's ids, built once: per group it made 50,000 failures quadratic) failed named once, where its first
    case was: pytest runs all its cases from the bare id."""
    failed = set(failing)
    whole: dict[str, bool] = {}  # per test, decided once (a 30,000-case test is one subset check, not 30,000)
    out: dict[str, None] = {}
    for test_id in failing:
        base = parametrized_base(test_id)
        if base != test_id and base not in whole:
            whole[base] = len(cases.get(base, ())) > 1 and cases[base] <= failed
        out[base if whole.get(base) and base != test_id else test_id] = None
    return list(out)


def pytest_command(
    groups: Sequence[FailureGroup], *, max_ids: int, max_chars: int, every: Iterable[str] = ()
) -> tuple[str, int]:
    """(``python -m pytest 'id' …``, how many failing tests it leaves out). The ids are taken in turn from
    each group (every distinct failure is in it), a parametrized test whose every case in ``every`` (the
    run's test ids) failed named once; each single-quoted so that no id can end its quotes, substitute or
    chain a command; whole ids only, never one cut in half. ("", 0) when the failures are not all pytest
    node ids: no command is better than a wrong one."""
    everything = [r.test_id for g in groups for r in g.records]
    if not everything or not all(_PYTEST_ID.match(test_id) for test_id in everything):
        return "", 0
    cases = cases_by_test([*every, *everything])
    per_group = [collapse_parametrized([r.test_id for r in g.records], cases) for g in groups]
    unique = len({i for ids in per_group for i in ids})
    chosen = list(dict.fromkeys(interleave(per_group, max_ids)))
    words: list[str] = []
    size = len(PYTEST)
    for test_id in chosen:
        word = _quote(test_id)
        if size + len(_SEPARATOR) + len(word) > max_chars:
            if words:
                break
            continue  # one id longer than the whole budget: skipped, never cut
        words.append(word)
        size += len(_SEPARATOR) + len(word)
    return _SEPARATOR.join([PYTEST, *words]), unique - len(words)
