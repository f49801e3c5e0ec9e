"""Rules the test suite keeps (COMMON: no wall-clock assertions, a clone alone runs every test)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import _pytest.hookspec
from hypothesis import settings

from tests import conftest

TESTS = Path(__file__).resolve().parents[1]
TEST_FILES = sorted(
    p for p in TESTS.rglob("*.py") if "data" not in p.relative_to(TESTS).parts and p != Path(__file__).resolve()
)


def _lines(pattern: str) -> list[str]:
    regex = re.compile(pattern)
    return [
        f"{path.relative_to(TESTS)}:{n}: {line.strip()}"
        for path in TEST_FILES
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if regex.search(line)
    ]


def test_hypothesis_has_no_deadline():
    assert settings.default.deadline is None


def test_no_assertion_on_the_clock():
    assert _lines(r"^\s*assert\b.*(monotonic|perf_counter|time\.time|\btook\b|elapsed)") == []


def test_no_test_reads_the_team_workspace():
    assert _lines(r"\.\./shared|parent / \"shared\"|shared\" / \"data") == []


def test_no_xdist_group_mark_the_suites_dist_mode_ignores():
    # The suite runs under --dist loadfile (README, .ci/run): one module, one worker. An xdist_group mark would
    # promise a grouping that loadfile never makes (and loadgroup silently lost with pytest 9.2, pytest-xdist
    # #1386); tests sharing an expensive fixture go in one module instead (tests/README.md).
    assert _lines(r"mark\.xdist_group\(") == []


def _max_examples(function: ast.FunctionDef) -> int | None:
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "settings":
            for keyword in decorator.keywords:
                if keyword.arg == "max_examples" and isinstance(keyword.value, ast.Constant):
                    return int(keyword.value.value)
    return None


def test_every_thorough_property_twin_is_slow_and_checks_its_fast_test_on_more_examples():
    """A property test's full sample runs under ``pytest -m slow`` in a ``_thorough`` twin (tests/README.md)."""
    twins = []
    for path in TEST_FILES:
        functions = {f.name: f for f in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                     if isinstance(f, ast.FunctionDef)}  # fmt: skip
        for name, twin in functions.items():
            if not name.endswith("_thorough"):
                continue
            fast = functions.get(name.removesuffix("_thorough"))
            twins.append(name)
            assert fast is not None, f"{path.name}: {name} has no fast test of the same name"
            assert "pytest.mark.slow" in map(ast.unparse, twin.decorator_list), f"{path.name}: {name} is not slow"
            assert (_max_examples(fast) or 100) < (_max_examples(twin) or 0), f"{path.name}: {name} checks no more"
            assert f"{fast.name}.hypothesis.inner_test(" in ast.unparse(twin), f"{path.name}: {name} checks other code"
    assert len(twins) >= 3, twins


def test_the_suites_hooks_from_plugins_are_optional():
    """`pytest -p no:xdist` runs the suite in one process (tests/README.md): a conftest hook that only a plugin
    specifies (xdist's ``pytest_xdist_auto_num_workers``) must be optional, or pytest refuses it as unknown."""
    plugin_hooks = [
        name
        for name in dir(conftest)
        if name.startswith("pytest_") and not hasattr(_pytest.hookspec, name) and callable(getattr(conftest, name))
    ]
    assert plugin_hooks, "the suite's conftest answers xdist's worker-count hook"
    required = [name for name in plugin_hooks if not getattr(conftest, name).pytest_impl.get("optionalhook")]
    assert required == []
