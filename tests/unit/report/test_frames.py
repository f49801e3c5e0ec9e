"""frames.py: the failing line from real traceback texts (pytest's JUnit text, Python, jest, go).

The pytest texts are the <failure> bodies pytest 8 wrote (``--junitxml -o junit_family=xunit1``)
for tests/e2e/report/test_failing_line.py's suite; the end-to-end run is in that test."""

from __future__ import annotations

import pytest

from ci_shards.report.frames import Frame, failing_line, frames, restore_first_indent

PYTEST_DIRECT = """def test_direct():
        x = 1
>       assert x == 2
E       assert 1 == 2

tests/test_lines.py:8: AssertionError"""

PYTEST_HELPER = """v = 1

    @pytest.mark.parametrize("v", [1])
    def test_through_helper(v):
>       check(v)

tests/test_lines.py:13: <SP>
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _<SP>

value = 1

    def check(value):
        if value != 2:
>           raise ValueError(f"bad value {value}")
E           ValueError: bad value 1

tests/helpers.py:3: ValueError""".replace("<SP>", " ")  # pytest ends these two lines with a space

PYTEST_SHORT = """tests/test_lines.py:13: in test_through_helper
    check(v)
tests/helpers.py:3: in check
    raise ValueError(f"bad value {value}")
E   ValueError: bad value 1"""

PYTHON = """Traceback (most recent call last):
  File "/home/runner/work/r/r/tests/test_u.py", line 9, in test_x
    helper()
  File "/home/runner/work/r/r/src/pkg/mod.py", line 4, in helper
    json.loads("x")
  File "/usr/lib/python3.12/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"""

JEST = """Error: expect(received).toBe(expected) // Object.is equality

Expected: 3
Received: 2
    at Object.toBe (/home/runner/work/r/r/src/sum.test.js:4:17)
    at Promise.then.completed (/home/runner/work/r/r/node_modules/jest-circus/build/utils.js:298:28)
    at new Promise (<anonymous>)"""

GO = """=== RUN   TestSum
    sum_test.go:12: got 2, want 3
--- FAIL: TestSum (0.00s)"""


@pytest.mark.parametrize(
    ("text", "test_file", "workspace", "expected"),
    [
        (PYTEST_DIRECT, "tests/test_lines.py", "", Frame("tests/test_lines.py", 8)),
        # the deepest frame in the test's file (the call), not the helper's raise
        (PYTEST_HELPER, "tests/test_lines.py", "", Frame("tests/test_lines.py", 13)),
        (PYTEST_SHORT, "tests/test_lines.py", "", Frame("tests/test_lines.py", 13)),
        # a fixture file's failure: no frame in the test's file, the deepest in the repository
        (PYTEST_HELPER, "tests/test_other.py", "", Frame("tests/helpers.py", 3)),
        (PYTHON, "tests/test_u.py", "", Frame("tests/test_u.py", 9)),
        (PYTHON, "tests/test_v.py", "/home/runner/work/r/r", Frame("src/pkg/mod.py", 4)),
        (PYTHON, "tests/test_v.py", "", None),  # absolute paths outside a known workspace never count
        (JEST, "src/sum.test.js", "", Frame("src/sum.test.js", 4)),
        (JEST, "/home/runner/work/r/r/src/sum.test.js", "/home/runner/work/r/r", Frame("src/sum.test.js", 4)),
        (GO, "sum_test.go", "", Frame("sum_test.go", 12)),
        ("AssertionError: no frames here", "tests/test_a.py", "", None),
        ("", None, "", None),
    ],
)
def test_failing_line(text, test_file, workspace, expected):
    assert failing_line(text, test_file, workspace=workspace) == expected


def test_installed_code_never_counts():
    text = "/src/.venv/lib/python3.12/site-packages/x.py:3: in f\nnode_modules/a/b.js:1: boom"
    assert [str(f) for f in frames(text)] == ["/src/.venv/lib/python3.12/site-packages/x.py:3", "node_modules/a/b.js:1"]
    assert failing_line(text, "tests/test_a.py") is None


def test_restore_first_indent_only_for_pytest_source():
    assert restore_first_indent(PYTEST_DIRECT).startswith("    def test_direct():\n        x = 1")
    for unchanged in (PYTEST_HELPER, PYTHON, JEST, GO, "one line", "a\nb", ""):
        assert restore_first_indent(unchanged) == unchanged
