"""Old flag names kept working after a rename: hidden from ``--help``, storing into the new flag's value, and
saying once on stderr which name to use instead."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from ci_shards.common.console import console_for


class DeprecatedAlias(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, *, new: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        console = console_for(os.environ)
        text = f"ci-shards: {option_string} is deprecated: use {self.new} (same meaning)"
        # a ci-shards line like every other off GitHub; there a warning annotation, so the rename is seen
        console.warning(text) if console.github else console.line(text)
        setattr(namespace, self.dest, values)
