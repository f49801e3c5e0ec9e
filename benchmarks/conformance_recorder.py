"""A pytest plugin for ``benchmarks/conformance.py``: every report plain pytest counts, in its own words.

Loaded only into the plain ``python -m pytest`` run (``-p conformance_recorder``, with this folder on
``PYTHONPATH``). Each report's category is the one pytest's terminal summary line counts it under
(``pytest_report_teststatus``: passed, failed, error, skipped, xfailed, xpassed, and pytest 9's
``subtests passed`` ...), so the benchmark compares ci-shards with exactly what pytest says. One JSON
line per report to the file named by ``CONFORMANCE_REPORTS``.
"""

from __future__ import annotations

import json
import os

import pytest

_STATE: dict[str, object] = {}


def pytest_configure(config: pytest.Config) -> None:
    _STATE["config"] = config
    if hasattr(config, "workerinput"):
        return  # a pytest-xdist worker (coverage.py's addopts -n auto): the controller receives its reports
    _STATE["out"] = open(os.environ["CONFORMANCE_REPORTS"], "w", encoding="utf-8")  # noqa: SIM115 (closed below)


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    config = _STATE["config"]
    assert isinstance(config, pytest.Config)
    if "out" not in _STATE:
        return
    category, _short, _verbose = config.hook.pytest_report_teststatus(report=report, config=config)
    if category or report.when == "teardown":  # a passed teardown ends a test's run (conformance._per_test)
        subtest = type(report).__name__ == "SubtestReport"  # pytest 9's subtests (and unittest subTest)
        line = {"id": report.nodeid, "when": report.when, "category": category, "subtest": subtest}
        out = _STATE["out"]
        assert hasattr(out, "write")
        out.write(json.dumps(line) + "\n")  # type: ignore[union-attr]


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A collector pytest skipped (a module's ``pytest.importorskip``): one skipped in pytest's summary line; one
    that failed (a module that cannot be imported) one error, as the line says "3 errors" (since run 10: under
    pytest-xdist, or with --continue-on-collection-errors, the other tests run beside it)."""
    out = _STATE.get("out")
    if (report.skipped or report.failed) and report.nodeid and out is not None:
        category = "skipped" if report.skipped else "error"
        line = {"id": report.nodeid, "when": "collect", "category": category, "subtest": False}
        out.write(json.dumps(line) + "\n")  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    out = _STATE.pop("out", None)
    if out is not None:
        out.close()  # type: ignore[attr-defined]
