"""A ``--pytest`` plan's collected tests without timings, weighed by what their files say. Pure core.

Without timings every collected test is estimated alike (``estimates.estimate``): one unit each,
what pytest-split counts. Two things the collection itself shows, or the test's text, make some
tests cost far more than one unit, and a plan that ignores them puts them all in one shard:

- a hypothesis ``@given`` test runs ``max_examples`` examples (``static_count.weighted_tests``,
  read with ``ast``: nothing imported): its factor is its examples times ``EXAMPLE_TESTS``;
- tests ``-m``/``-k``/a plugin deselect are still collected by the shard that runs their file
  (click 8.5.1: 30,000 deselected stress cases, 2.4 s of CPU): their file's first planned test
  carries ``DESELECTED_TESTS`` per deselected test, so the file lands where that time fits. Each
  shard a file is cut into collects it again, so a file whose collection outweighs its selected
  tests is kept whole (``keep_whole_rules``, keep-together rules of the plan): cutting it would only
  repeat its cost.

These are the same rules discovery's count uses (``new_files``), so with no timings both modes
weigh a file alike. Only files none of whose tests has a timing are weighed: a new test in a timed
file gets the median of its file's timed tests (``estimates.estimate``), seconds these factors,
counted in tests, do not scale.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_shards.common.console import plural
from ci_shards.model.matching import item_file
from ci_shards.plan.hypothesis_profiles import ProfileReader
from ci_shards.plan.static_count import DESELECTED_TESTS, EXAMPLE_TESTS, CountRules, weighted_tests
from ci_shards.plan.units import literal_rule

# every name is looked up by the node ids pytest collected, so any function or class may be one
_ANY_NAME = CountRules(functions=("*",), classes=("*",))


@dataclass(frozen=True)
class Weights:
    factors: dict[str, float]  # test id → its estimate's factor (absent: 1)
    note: str
    keep_whole: tuple[str, ...] = ()  # files whose collection outweighs their tests

    def keep_whole_rules(self, items: Collection[str]) -> tuple[str, ...]:
        """Keep-together patterns for the ``keep_whole`` files that hold one of ``items`` (a file a
        change-based selection emptied needs no rule, which would be noted as matching nothing)."""
        files = {item_file(i) for i in items}
        return tuple(literal_rule(f) for f in self.keep_whole if f in files)


def _function_key(node_id: str) -> str:
    """``f.py::TestA::test_x[1-2]`` → ``TestA::test_x``: the function a collected test comes from."""
    rest = node_id.split("::", 1)[1] if "::" in node_id else ""
    return rest.split("[", 1)[0]


def collected_weights(
    ids: Sequence[str],
    *,
    timed: Collection[str],
    deselected: Mapping[str, int],
    units_of: Callable[[str], Mapping[str, float] | None],
) -> Weights:
    """Factors for the ``ids`` of files none of whose tests is ``timed``: ``units_of(file)`` gives what
    one case of each costly test of a file costs (None: not read), ``deselected`` the file's deselected tests."""
    by_file: dict[str, list[str]] = {}
    for node_id in ids:
        by_file.setdefault(item_file(node_id), []).append(node_id)
    timed_files = {item_file(key) for key in timed}
    by_file = {file: unknown for file, unknown in by_file.items() if file not in timed_files}
    factors: dict[str, float] = {}
    keep_whole: list[str] = []
    given = charged = 0
    for file, unknown in sorted(by_file.items()):
        units = units_of(file) or {}
        for node_id in unknown:
            factor = units.get(_function_key(node_id))
            if factor is not None:
                factors[node_id] = factor
                given += 1
        if deselected.get(file):
            first = min(unknown)
            charge = deselected[file] * DESELECTED_TESTS
            if charge > sum(factors.get(i, 1.0) for i in unknown):
                keep_whole.append(file)
            factors[first] = factors.get(first, 1.0) + charge
            charged += deselected[file]
    details = []
    if given:
        details.append(f"{plural(given, 'hypothesis test')} at {EXAMPLE_TESTS:g} test per example")
    if charged:
        details.append(
            f"{plural(charged, 'deselected test')} at {DESELECTED_TESTS:g} test each, charged to its file's first test"
        )
    if keep_whole:
        details.append(f"{plural(len(keep_whole), 'file')} whose collection outweighs its tests kept whole")
    note = f"tests without timings weighed by their files' text: {', '.join(details)}" if details else ""
    return Weights(factors, note, tuple(keep_whole))


def read_units(
    paths: Mapping[str, str], profiles: ProfileReader | None = None
) -> Callable[[str], Mapping[str, float] | None]:
    """The edge of ``collected_weights``: the costly tests of a collected file, read with ``ast``
    (None for a file that is not Python or cannot be read: its tests stay at one unit); ``profiles``
    give the examples a conftest's hypothesis profile sets, as discovery reads them."""

    def units_of(file: str) -> Mapping[str, float] | None:
        path = paths.get(file)
        if path is None or not path.endswith(".py"):
            return None
        examples = profiles.examples(Path(path).parent) if profiles is not None else None
        rules = _ANY_NAME if examples is None else dataclasses.replace(_ANY_NAME, examples=examples)
        try:
            return weighted_tests(Path(path).read_bytes(), rules)
        except (OSError, SyntaxError, ValueError, RecursionError):
            return None

    return units_of
