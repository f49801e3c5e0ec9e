"""Which CPython a workflow sets up for a ``requires-python`` specifier (pure).

Only the clauses a ``requires-python`` uses are read (PEP 440: ``>=``, ``>``, ``<=``, ``<``, ``==`` with or without
``.*``, ``!=``, ``~=``), over minor versions: a candidate ``3.Y`` stands for its newest patch release, which is what
setup-python installs for ``"3.Y"``. A clause it cannot read is reported, never guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

# The CPython minor versions setup-python offers as stable releases that init chooses among (oldest first).
KNOWN_PYTHONS: Final = ("3.9", "3.10", "3.11", "3.12", "3.13")
_CLAUSE: Final = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*(\d+(?:\.\d+)*)(\.\*)?\s*$")


def _minor(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


def _allows(op: str, version: tuple[int, ...], star: bool, candidate: tuple[int, int]) -> bool:
    head = version[:2] if len(version) >= 2 else (version[0], 0)
    has_patch = len(version) > 2 and any(version[2:])
    checks = {
        ">=": candidate >= head,
        ">": candidate > head or (candidate == head and has_patch),
        "<=": candidate <= head,
        "<": candidate < head or (candidate == head and has_patch),
        "==": candidate == head if (star or len(version) >= 2) else candidate[0] == version[0],
        "===": candidate == head,
        "!=": candidate != head if (star or not has_patch) else True,
        # ~=3.10 is >=3.10, ==3.*; ~=3.10.1 is >=3.10.1, ==3.10.*
        "~=": candidate >= head and candidate[: max(len(version) - 1, 1)] == head[: max(len(version) - 1, 1)],
    }
    return checks[op]


def allowed_pythons(spec: str, known: Sequence[str] = KNOWN_PYTHONS) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the known versions ``spec`` allows, oldest first; the clauses that could not be read)."""
    unread: list[str] = []
    allowed = list(known)
    for clause in (c for c in spec.split(",") if c.strip()):
        match = _CLAUSE.match(clause)
        if match is None:
            unread.append(clause.strip())
            continue
        op, text, star = match.group(1), match.group(2), bool(match.group(3))
        version = tuple(int(part) for part in text.split("."))
        allowed = [v for v in allowed if _allows(op, version, star, _minor(v))]
    return tuple(allowed), tuple(unread)


def minor_of(version: str) -> str | None:
    """``3.12`` of a ``.python-version`` line such as ``3.12.4`` or ``3.12``; None for ``pypy3.10`` and the like."""
    match = re.match(r"^(\d+)\.(\d+)(?:\.\d+)?$", version.strip())
    return f"{match.group(1)}.{match.group(2)}" if match else None


_POETRY_RANGE: Final = re.compile(r"([\^~])(\d+)(?:\.(\d+))?(?:\.\d+)*")


def from_poetry(constraint: str) -> str:
    """Poetry's ``python`` constraint as a PEP 440 specifier (https://python-poetry.org/docs/dependency-specification/):
    ``^3.10`` is ``>=3.10,<4``, ``~3.10`` is ``>=3.10,<3.11``, a bare ``3.10`` is ``==3.10``, ``*`` allows all, and
    clauses join by commas or spaces; anything else is left as written, so ``allowed_pythons`` reports it unread."""
    clauses: list[str] = []
    for token in re.split(r"\s*,\s*|\s+(?=[<>=!~^\d])", constraint.strip()):
        caret_or_tilde = _POETRY_RANGE.fullmatch(token)
        if caret_or_tilde is not None:
            op, major, minor = caret_or_tilde.group(1), int(caret_or_tilde.group(2)), caret_or_tilde.group(3)
            low = f"{major}.{minor}" if minor is not None else f"{major}"
            high = f"{major + 1}" if op == "^" or minor is None else f"{major}.{int(minor) + 1}"
            clauses += [f">={low}", f"<{high}"]
        elif re.fullmatch(r"\d+(\.\d+)*(\.\*)?", token):
            clauses.append(f"=={token}")
        elif token not in ("", "*"):
            clauses.append(token)
    return ",".join(clauses)
