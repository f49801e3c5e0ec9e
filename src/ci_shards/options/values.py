"""Parsers of option values written on the command line (durations, sizes, signals, seconds): pure, and raising
``argparse.ArgumentTypeError`` so argparse names the flag in its one-line error; and the closed set of values of
the comment mode (``CommentMode``)."""

from __future__ import annotations

import argparse
import math
import re
import signal
from enum import Enum

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(text: str) -> float:
    """``30m``, ``10s``, ``1.5h``, ``500ms`` or plain seconds (0 or more)."""
    match = _DURATION.match(text)
    if not match:
        hint = " (it must not be negative)" if text.strip().startswith("-") else ""
        msg = f"{text!r} is not a duration{hint} (e.g. 30m, 10s, 1.5h, 500ms)"
        raise argparse.ArgumentTypeError(msg)
    return float(match.group(1)) * _UNITS[match.group(2)]


def parse_timeout(text: str) -> float:
    """A duration above 0: ``--timeout 0`` must not silently mean "no limit"."""
    seconds = parse_duration(text)
    if seconds <= 0:
        msg = f"{text!r}: the timeout must be above 0 (leave --timeout out for no limit)"
        raise argparse.ArgumentTypeError(msg)
    return seconds


def parse_seconds(text: str) -> float:
    """A finite number of seconds above 0 (``nan`` would silently disable a budget, ``-1`` fail every test)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        msg = f"{text!r} is not a number of seconds above 0"
        raise argparse.ArgumentTypeError(msg)
    return value


def parse_size(text: str) -> int:
    """``512M``, ``2G``, ``1.5g``, ``1024`` (bytes); at least one byte, finite."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    raw = text.strip().lower().rstrip("ib").rstrip("b")
    factor = 1
    if raw and raw[-1] in units:
        raw, factor = raw[:-1], units[raw[-1]]
    try:
        value = float(raw) * factor
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 1:
        msg = f"{text!r} is not a size above 0 (e.g. 512M, 2G)"
        raise argparse.ArgumentTypeError(msg)
    return int(value)


def parse_signal(text: str) -> int:
    """A signal this platform has, by name (``SIGINT``, ``term``) or number; never 0 (it sends nothing)."""
    name = text.strip().upper()
    if name.isdigit():
        number = int(name)
    else:
        try:
            number = int(signal.Signals[name if name.startswith("SIG") else "SIG" + name])
        except KeyError:
            number = 0
    if number == 0 or number not in {int(s) for s in signal.valid_signals()}:
        msg = f"{text!r} is not a signal of this platform (e.g. SIGINT, SIGTERM, 15)"
        raise argparse.ArgumentTypeError(msg)
    return number


def parse_days(text: str) -> int:
    """A whole number of days, 0 or more."""
    if not text.isdigit():
        msg = f"must be a whole number of days, not {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return int(text)


class CommentMode(str, Enum):
    """When the PR comment is written (``aggregate --comment-mode``, ``comment --mode``)."""

    ALWAYS = "always"  # create or update on every run
    ON_FAILURE = "on-failure"  # create only when the run failed; an existing comment is always updated
    ON_CHANGE = "on-change"  # create or update only when the result differs from the comment's
    OFF = "off"
