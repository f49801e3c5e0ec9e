"""pytest plugin behind ``--coverage-map``: each test's lines under its own coverage context.

The context is the test's node id, the spelling the plan uses (``tests/test_a.py::TestX::test_y[1]``),
switched before each test's setup, so a change-based selection can keep only the tests that ran a
changed function body (docs/selection.md, "Narrowing by executed code"). Lines run while collecting
stay in the empty context. Fixtures whose one setup serves several tests are not any test's own:

- ``module``- and ``class``-scoped ones run in the *test file's* context (the file part of the node
  id): the setup happens in the first test that asks, but every later test of the file that uses the
  fixture depends on what it did, so those lines select the whole file;
- ``session``- and ``package``-scoped ones run in ``SHARED_CONTEXT``, attributed to no test file (every
  later test file may depend on them).

xunit-style ``setup_module``/``setup_class`` and unittest's ``setUpClass`` are module- and class-scoped
autouse fixtures in pytest (``_pytest/python.py``, ``_pytest/unittest.py``), so they take the file's
context too. A fixture's teardown runs in the context of the test whose teardown finalizes it.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from ci_shards.coverage.artifact import SHARED_CONTEXT

_SHARED_SCOPES = ("session", "package")
_FILE_SCOPES = ("module", "class")


def _current() -> Any:
    import coverage  # noqa: PLC0415

    return coverage.Coverage.current()


class _Switcher:
    def __init__(self) -> None:
        self.current: str | None = None  # the running test's node id
        self.active: str | None = None  # the context coverage.py records into now

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        cov = _current()
        if cov is not None and item.nodeid != self.current:
            cov.switch_context(item.nodeid)
            self.current = self.active = item.nodeid
        yield

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Generator[None, None, None]:
        cov = _current()
        if cov is None or self.current is None or fixturedef.scope not in (*_SHARED_SCOPES, *_FILE_SCOPES):
            yield
            return
        outer = self.active  # a fixture may set up another inside it (request.getfixturevalue)
        self.active = SHARED_CONTEXT if fixturedef.scope in _SHARED_SCOPES else self.current.split("::", 1)[0]
        cov.switch_context(self.active)
        try:
            yield
        finally:
            self.active = outer
            cov.switch_context(outer)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Switcher(), "ci-shards-coverage-map")
