"""pytest plugin behind ``--coverage-map``: each test file's lines under its own coverage context.

One context per test file, switched when the next test belongs to another file (not one per test:
per-test contexts cost 3x and more on real suites). The context is the file part of the node id,
the same spelling the plan uses. Lines run while collecting stay in the empty context.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest


class _Switcher:
    def __init__(self) -> None:
        self.current: str | None = None

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        import coverage  # noqa: PLC0415

        cov = coverage.Coverage.current()
        test_file = item.nodeid.split("::", 1)[0]
        if cov is not None and test_file != self.current:
            cov.switch_context(test_file)
            self.current = test_file
        yield


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Switcher(), "ci-shards-coverage-map")
