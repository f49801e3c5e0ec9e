"""Which parts of a test file without timings discovery may plan apart, and what each costs. Pure.

Discovery planned a file without timings whole, so one file that holds most of a suite's time
(packaging 26.4's ``tests/test_version.py``: 51,524 of 64,207 tests) made one shard three times the
mean. ``file_parts`` offers balance the file's tests instead, by the node ids pytest collects them
under (``tests/test_version.py::TestVersion::test_hash``: ``static_count.FileCount.parts``, read
with ``ast``; a parametrized test's id covers all its cases), and balance keeps the file whole
unless the shards need it cut (granularity ``auto``; ``whole_files_as_items`` names a file that
stayed in one shard by its path again).

Every test still runs exactly once whatever the count missed: a test no part names (defined under
an ``if``, inherited from another module, made by ``pytest_generate_tests``) runs in the shard
that owns its file (``model.plan.ShardOwnership``), and ``static_count`` names only definitions
pytest surely collects under that name. The file's cost is shared by its parts in proportion to
theirs, so the estimate of the whole (what the count missed, the deselected tests' collection)
is kept. A file is offered whole when:

- it has fewer than two parts (nothing to cut);
- its deselected tests' collection outweighs its selected tests (click 8.5.1's stress file): each
  shard a file is cut into collects all of it again, so a cut would only repeat that cost — the
  same rule ``first_weights`` applies to a ``--pytest`` plan.
"""

from __future__ import annotations

from collections.abc import Mapping

from ci_shards.plan.static_count import DESELECTED_TESTS, FileCount


def cuttable(count: FileCount) -> bool:
    """Whether balance may plan the file's parts apart (the rules above)."""
    selected = count.tests + count.extra_units
    return len(count.parts) >= 2 and count.deselected * DESELECTED_TESTS <= selected


def file_parts(file: str, count: FileCount, seconds: float) -> Mapping[str, tuple[float, int]]:
    """The items a file of ``seconds`` is planned as: ``{file::key: (seconds, tests)}`` for a
    cuttable file, else ``{file: (seconds, tests)}``."""
    if not cuttable(count):
        return {file: (seconds, count.tests)}
    total = sum(units for _key, _cases, units in count.parts)
    return {f"{file}::{key}": (seconds * units / total, cases) for key, cases, units in count.parts}
