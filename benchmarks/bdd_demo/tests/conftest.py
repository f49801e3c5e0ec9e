"""Conformance run 8's pytest-bdd project (benchmarks/conformance.py, bdd_demo): the steps of both features.

Copied to the campaign's sdists/bdd-demo and run there with pytest-bdd 9.0.1 (docs/benchmarks.md); one example of
the outline and the undefined step fail on purpose, one step skips.
"""

import pytest
from pytest_bdd import given, parsers, then, when


@given("a basket", target_fixture="basket")
def basket():
    return {}


@given(parsers.parse("there are {n:d} cucumbers"), target_fixture="count")
def count(n):
    return {"n": n}


@when(parsers.parse("I eat {n:d} cucumbers"))
def eat(count, n):
    count["n"] -= n


@then(parsers.parse("I should have {n:d} cucumbers"))
def left(count, n):
    assert count["n"] == n


@given("a step that skips")
def skips():
    pytest.skip("skipped in its step")
