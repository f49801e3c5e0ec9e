"""plan.json (``ci-shards/plan@1``) in code: the shards and their items, the digest, and which shard runs
a test the plan does not know (``ShardOwnership``). Loaded from a file only through ``planfile.load_plan``."""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final

from ci_shards.common.errors import as_written
from ci_shards.common.json_text import indented
from ci_shards.model.fields import optional_str, require, round_seconds, seconds, whole
from ci_shards.model.matching import item_file, owning_item

PLAN_SCHEMA: Final = "ci-shards/plan@1"


class Granularity(str, Enum):
    TEST = "test"
    FILE = "file"
    AUTO = "auto"


def _granularity(value: Any) -> Granularity:
    try:
        return Granularity(value)
    except ValueError:
        msg = f"'granularity' must be one of {', '.join(g.value for g in Granularity)}, not {as_written(value)}"
        raise ValueError(msg) from None


@dataclass(frozen=True)
class ShardPlan:
    index: int  # 1-based
    items: tuple[str, ...]
    estimated_seconds: float
    # test files pytest-xdist runs by class and function on every worker, not whole on one (plan/workers.py
    # best_spread); written only when there are some, so other plans keep their bytes and digest
    spread: tuple[str, ...] = ()
    # groups of test files a keep-together rule joins, which pytest-xdist runs as one work unit on one worker, in
    # pytest's order (plan/workers.py joined_files); written only when there are some, as ``spread``
    joined: tuple[tuple[str, ...], ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "index": self.index,
            "items": list(self.items),
            "estimated_seconds": round_seconds(self.estimated_seconds),
        }
        if self.spread:
            data["spread"] = list(self.spread)
        if self.joined:
            data["joined"] = [list(group) for group in self.joined]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShardPlan:
        if not isinstance(data, Mapping):
            msg = f"each of 'shards' must be an object, not {as_written(data)}"
            raise ValueError(msg)
        items = require(data, "items")
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            msg = "shard 'items' must be a list of strings"
            raise ValueError(msg)
        spread = data.get("spread", [])
        if not isinstance(spread, list) or not all(isinstance(f, str) for f in spread):
            msg = "shard 'spread' must be a list of test files"
            raise ValueError(msg)
        joined = data.get("joined", [])
        if not isinstance(joined, list) or not all(
            isinstance(g, list) and all(isinstance(f, str) for f in g) for g in joined
        ):
            msg = "shard 'joined' must be a list of lists of test files"
            raise ValueError(msg)
        return cls(
            index=whole(data, "index"),
            items=tuple(items),
            estimated_seconds=seconds(data, "estimated_seconds"),
            spread=tuple(spread),
            joined=tuple(tuple(group) for group in joined),
        )


@dataclass(frozen=True, kw_only=True)
class Plan:
    """A whole plan: which items each of ``total`` shards runs.

    ``digest`` covers everything except ``created_at`` and itself, so two plans made from the same
    inputs have the same digest even when made at different times.
    """

    total: int
    granularity: Granularity
    shards: tuple[ShardPlan, ...]
    lower_bound_seconds: float
    unknown_items: int
    created_at: str = ""
    files_cut: int = 0
    notes: tuple[str, ...] = ()
    # a pytest plan: the folder its items (pytest node ids) are relative to, POSIX and relative to the
    # working directory the plan was made in (so a CI checkout elsewhere still resolves it);
    # None: the items are relative to that working directory
    rootdir: str | None = None
    # slowest shard over the lower bound counting only measured seconds, when some items were guessed
    measured_ratio: float | None = None
    # the shard that runs tests in files no shard owns (new test files): ``pick_unowned_shard``;
    # 0 in a plan written before the field, where the same rule is applied on use (``ownership``)
    unowned_shard: int = 0

    # fixed seconds every shard with work pays besides its items (start-up, collection, session
    # fixtures), learned by aggregate; not in ``estimated_seconds``, which is the items' time
    shard_overhead_seconds: float = 0.0
    # pytest-xdist workers each shard was planned for (``--workers``): its ``estimated_seconds`` is the
    # makespan of its items over them (plan/workers.py); written only above 1, so older plans keep their digest
    workers: int = 1
    # tests a --pytest collection found that -k, -m or a plugin deselected (pytest's "N deselected"): they
    # are in no shard; written only when non-zero, so older plans keep their digest. It tells an empty plan
    # made by deselection from one where nothing was collected
    deselected: int = 0

    # change-based selection (docs/selection.md), each written only when non-empty so a plan from before
    # these fields keeps its digest: items left out by the diff → the rule that skipped each; in shadow
    # mode the items that would have been skipped (they are planned and run); the decision's lines
    skipped_by_diff: Mapping[str, str] = field(default_factory=dict)
    would_skip: Mapping[str, str] = field(default_factory=dict)
    selection: tuple[str, ...] = ()

    def content(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "schema": PLAN_SCHEMA,
            "total": self.total,
            "granularity": self.granularity.value,
            "shards": [s.to_json() for s in self.shards],
            "lower_bound_seconds": round_seconds(self.lower_bound_seconds),
            "unknown_items": self.unknown_items,
            "files_cut": self.files_cut,
            "notes": list(self.notes),
        }
        if self.rootdir is not None:
            data["rootdir"] = self.rootdir
        if self.measured_ratio is not None:
            data["measured_ratio"] = round(self.measured_ratio, 3)
        if self.unowned_shard:  # absent when 0, so a plan from before the field keeps its digest
            data["unowned_shard"] = self.unowned_shard
        if self.shard_overhead_seconds:  # optional: plans without it keep their bytes and digest
            data["shard_overhead_seconds"] = round_seconds(self.shard_overhead_seconds)
        if self.workers > 1:
            data["workers"] = self.workers
        if self.deselected:
            data["deselected"] = self.deselected
        for key, value in (("skipped_by_diff", self.skipped_by_diff), ("would_skip", self.would_skip)):
            if value:
                data[key] = dict(sorted(value.items()))
        if self.selection:
            data["selection"] = list(self.selection)
        return data

    @functools.cached_property  # once per plan: plan.json and the line that names it both need it
    def digest(self) -> str:
        canonical = json.dumps(self.content(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()

    @property
    def items(self) -> list[str]:
        return [item for shard in self.shards for item in shard.items]

    @property
    def estimated_makespan(self) -> float:
        return max((s.estimated_seconds for s in self.shards), default=0.0)

    def ownership(self) -> ShardOwnership:
        return ShardOwnership.of(self)

    def files_cut_into_ids(self, index: int | None = None) -> list[str]:
        """The test files whose tests the plan spread over more than one shard, named there by test id (of shard
        ``index`` only, when given): a command given those ids runs only the tests named."""
        shards_of = shards_per_file(self.shards)
        held = self.shards if index is None else (self.shard(index),)
        return sorted({item_file(i) for s in held for i in s.items if "::" in i and shards_of[item_file(i)] > 1})

    def shard(self, index: int) -> ShardPlan:
        if not 1 <= index <= self.total:
            msg = f"shard {index} is not in 1..{self.total}"
            raise ValueError(msg)
        return self.shards[index - 1]

    def to_json(self) -> dict[str, Any]:
        data = self.content()
        data["digest"] = self.digest
        data["created_at"] = self.created_at
        return data

    def dumps(self) -> str:
        """plan.json's exact bytes: sorted keys, 2-space indent, trailing newline."""
        return indented(self.to_json(), 2) + "\n"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Plan:
        schema = require(data, "schema")
        if schema != PLAN_SCHEMA:
            msg = f"schema is {as_written(schema)}, expected {as_written(PLAN_SCHEMA)}"
            raise ValueError(msg)
        listed = require(data, "shards")
        if not isinstance(listed, list):
            msg = f"'shards' must be a list, not {as_written(listed)}"
            raise ValueError(msg)
        shards = tuple(ShardPlan.from_json(s) for s in listed)
        total = whole(data, "total")
        if len(shards) != total or [s.index for s in shards] != list(range(1, total + 1)):
            msg = f"'shards' must hold shards 1..{total} in order"
            raise ValueError(msg)
        _check_items_unique(shards)
        plan = cls(
            total=total,
            granularity=_granularity(require(data, "granularity")),
            shards=shards,
            lower_bound_seconds=seconds(data, "lower_bound_seconds"),
            unknown_items=whole(data, "unknown_items", 0),
            created_at=str(data.get("created_at", "")),
            files_cut=whole(data, "files_cut", 0),
            notes=tuple(str(n) for n in data.get("notes", ())),
            rootdir=optional_str(data, "rootdir"),
            measured_ratio=None if data.get("measured_ratio") is None else float(data["measured_ratio"]),
            unowned_shard=int(data.get("unowned_shard", 0)),
            shard_overhead_seconds=float(data.get("shard_overhead_seconds", 0.0)),
            skipped_by_diff=_rules(data, "skipped_by_diff"),
            would_skip=_rules(data, "would_skip"),
            selection=tuple(str(line) for line in data.get("selection", ())),
            workers=whole(data, "workers", 1),
            deselected=whole(data, "deselected", 0),
        )
        if plan.workers < 1:
            msg = f"'workers' is {plan.workers}, not a number of workers ≥ 1"
            raise ValueError(msg)
        if not 0 <= plan.unowned_shard <= total:
            msg = f"'unowned_shard' is {plan.unowned_shard}, not a shard of 1..{total}"
            raise ValueError(msg)
        if not (math.isfinite(plan.shard_overhead_seconds) and plan.shard_overhead_seconds >= 0):
            msg = "'shard_overhead_seconds' must be a non-negative number of seconds"
            raise ValueError(msg)
        both = sorted(set(plan.skipped_by_diff) & set(plan.items))
        if both:
            msg = f"item {both[0]!r} is both planned and in 'skipped_by_diff'"
            raise ValueError(msg)
        stated = data.get("digest")
        if stated is not None and stated != plan.digest:
            msg = "digest does not match the plan's content (the file was edited or corrupted)"
            raise ValueError(msg)
        return plan


def _rules(data: Mapping[str, Any], key: str) -> dict[str, str]:
    """``{item: rule}`` (``skipped_by_diff``, ``would_skip``); absent: empty."""
    value = data.get(key, {})
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        msg = f"{key!r} must map items to the rule that skipped them"
        raise ValueError(msg)
    return dict(value)


def _check_items_unique(shards: Sequence[ShardPlan]) -> None:
    """Every item is in exactly one shard, once (docs/rules.md): a plan that would run one twice is refused
    on load, before any CI time is spent, whatever its digest says (a digest is easily recomputed)."""
    owner: dict[str, int] = {}
    for shard in shards:
        for item in shard.items:
            first = owner.get(item)
            if first is not None:
                where = f"shards {first} and {shard.index}" if first != shard.index else f"shard {first} twice"
                msg = f"item {item!r} is in {where} (every item must be in exactly one shard, once)"
                raise ValueError(msg)
            owner[item] = shard.index


def shards_per_file(shards: Sequence[ShardPlan]) -> dict[str, int]:
    """Each test file of the shards' items, and how many shards hold part of it (more than one: the plan cut it)."""
    seen: dict[str, int] = {}
    for shard in shards:
        for file in {i.split("::", 1)[0] for i in shard.items}:  # item_file, inlined: every planned item passes here
            seen[file] = seen.get(file, 0) + 1
    return seen


def pick_unowned_shard(shards: Sequence[ShardPlan]) -> int:
    """The shard that collects and runs test files no shard owns: the non-empty shard with the smallest
    estimate (it has the most room; an empty shard is not run at all), ties to the lowest index; 0
    when every shard is empty. Estimates are compared as written to plan.json, so the choice survives
    a round trip through the file."""
    busy = [s for s in shards if s.items]
    return min(busy, key=lambda s: (round_seconds(s.estimated_seconds), s.index)).index if busy else 0


@dataclass(frozen=True)
class ShardOwnership:
    """Which shard runs a collected test (docs/rules.md), so that every test pytest
    collects runs in exactly one shard, planned or not:

    1. the shard of the planned item that covers it (``owning_item``: ``f.py::test_q`` covers
       ``f.py::test_q[a]``);
    2. else (a test the plan does not know) the shard that owns its file: the lowest shard index
       holding an item of that file, so a file split across shards has one owner;
    3. else (a file no shard owns) the plan's ``unowned_shard``.
    """

    item_shard: Mapping[str, int]
    file_shard: Mapping[str, int]
    unowned_shard: int
    # the items a change-based selection skipped (``Plan.skipped_by_diff``): no shard runs what they cover, which
    # the unowned shard ran as unplanned tests (the selection saved nothing: "tests that ran, not planned")
    skipped: frozenset[str] = frozenset()

    @classmethod
    def of(cls, plan: Plan) -> ShardOwnership:
        item_shard = {item: s.index for s in plan.shards for item in s.items}
        file_shard: dict[str, int] = {}
        for shard in plan.shards:  # in index order: the first (lowest) shard of a file owns it
            for item in shard.items:
                file_shard.setdefault(item_file(item), shard.index)
        unowned = plan.unowned_shard or pick_unowned_shard(plan.shards)
        return cls(item_shard, file_shard, unowned, frozenset(plan.skipped_by_diff))

    def planned_shard(self, test_id: str) -> int | None:
        """The shard of the planned item that covers ``test_id`` (rule 1), None for an unplanned test."""
        item = owning_item(test_id, self.item_shard)
        return None if item is None else self.item_shard[item]

    def unplanned_shard(self, test_id: str) -> int:
        """The shard that runs a test no planned item covers (rules 2 and 3); 0, none, for one a skipped item
        covers."""
        if self.skipped and owning_item(test_id, self.skipped) is not None:
            return 0
        return self.file_shard.get(item_file(test_id), self.unowned_shard)

    def shard_of(self, test_id: str) -> int:
        planned = self.planned_shard(test_id)
        return self.unplanned_shard(test_id) if planned is None else planned


def parse_shard_spec(spec: str) -> tuple[int, int]:
    """``"I/N"`` → (I, N), 1-based. Raises ValueError with the reason for 0/4, 5/4, 2/0, "x"."""
    parts = spec.split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        msg = f"shard {spec!r} is not of the form I/N (e.g. 2/4)"
        raise ValueError(msg)
    index, total = (int(p) for p in parts)
    if total < 1:
        msg = f"shard {spec!r}: the total must be at least 1"
        raise ValueError(msg)
    if not 1 <= index <= total:
        msg = f"shard {spec!r}: the index must be between 1 and {total} (shards are 1-based)"
        raise ValueError(msg)
    return index, total
