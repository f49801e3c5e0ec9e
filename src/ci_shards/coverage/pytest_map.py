"""pytest plugin behind ``--coverage-map``: each test file's lines under its own coverage context.

One context per test file, switched when the next test belongs to another file (not one per test:
per-test contexts cost 3x and more on real suites). The context is the file part of the node id,
the same spelling the plan uses. Lines run while collecting stay in the empty context. The setup of
session- and package-scoped fixtures runs in ``SHARED_CONTEXT``: it happens once, in the first test
file that asks, but every later test file that uses the fixture depends on what it did.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from ci_shards.coverage.artifact import SHARED_CONTEXT

_SHARED_SCOPES = ("session", "package")


def _current() -> Any:
    import coverage  # noqa: PLC0415

    return coverage.Coverage.current()


class _Switcher:
    def __init__(self) -> None:
        self.current: str | None = None

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        cov = _current()
        test_file = item.nodeid.split("::", 1)[0]
        if cov is not None and test_file != self.current:
            cov.switch_context(test_file)
            self.current = test_file
        yield

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Generator[None, None, None]:
        cov = _current()
        if cov is None or fixturedef.scope not in _SHARED_SCOPES or self.current is None:
            yield
            return
        cov.switch_context(SHARED_CONTEXT)
        try:
            yield
        finally:
            cov.switch_context(self.current)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Switcher(), "ci-shards-coverage-map")
