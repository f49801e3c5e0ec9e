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

``--coverage-map-per file`` (``MAP_PER_ENV=file``) switches per test *file* instead: the map then selects
whole files, at the run cost of one context per file (docs/coverage.md, "What the map costs").

Each switch makes coverage.py flush the lines so far into its SQLite file, and with a file on disk
``SqliteDb`` connects, sets its pragmas, commits and closes for every outermost ``with`` of that flush
(coverage/sqlitedb.py ``__enter__``/``__exit__``): profiled on packaging's suite (docs/benchmarks.md,
issue 24) a third of the switching cost. The plugin holds one outer ``with`` open for the session, so
the flushes share one connection; the last exit (before coverage.py's own ``save``) commits them.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

from ci_shards.coverage.artifact import SHARED_CONTEXT
from ci_shards.coverage.launch import MAP_PER_ENV

_SHARED_SCOPES = ("session", "package")
_FILE_SCOPES = ("module", "class")


def _current() -> Any:
    import coverage  # noqa: PLC0415

    return coverage.Coverage.current()


class _HeldDatabase:
    """coverage.py's data connection held open across the flushes (its private ``CoverageData._start_using``
    and ``_connect``, ``SqliteDb.nest`` and ``con``). Defensive: a coverage.py without them, or one that
    closes the connection itself, only loses the saving; what is recorded never changes."""

    def __init__(self) -> None:
        self.db: Any = None

    def hold(self, cov: Any) -> None:
        data = getattr(cov, "_data", None)
        try:
            data._start_using()  # type: ignore[union-attr]  # its first use erases the file, closing every db
            db = data._connect()  # type: ignore[union-attr]
            db.__enter__()
        except Exception:
            return
        self.db = db

    def check(self) -> None:
        """Let go when coverage.py closed the connection under the hold (its next ``with`` reconnects)."""
        if self.db is not None and getattr(self.db, "con", None) is None:
            self.db.nest = max(0, int(getattr(self.db, "nest", 1)) - 1)
            self.db = None

    def release(self) -> None:
        self.check()
        db, self.db = self.db, None
        if db is not None:
            db.__exit__(None, None, None)


class _Switcher:
    def __init__(self, per_file: bool) -> None:
        self.per_file = per_file  # contexts per test file (--coverage-map-per file), else per test
        self.current: str | None = None  # the running test's context: its node id, or its file
        self.active: str | None = None  # the context coverage.py records into now
        self.held = _HeldDatabase()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        cov = _current()
        context = item.nodeid.split("::", 1)[0] if self.per_file else item.nodeid
        if cov is not None and context != self.current:
            self.held.check()
            cov.switch_context(context)
            if self.current is None:
                self.held.hold(cov)
            self.current = self.active = context
        yield

    def pytest_unconfigure(self) -> None:
        self.held.release()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Generator[None, None, None]:
        cov = _current()
        scopes = _SHARED_SCOPES if self.per_file else (*_SHARED_SCOPES, *_FILE_SCOPES)
        if cov is None or self.current is None or fixturedef.scope not in scopes:
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
    per_file = os.environ.get(MAP_PER_ENV) == "file"
    config.pluginmanager.register(_Switcher(per_file), "ci-shards-coverage-map")
