"""Reports on real output: pytest's JUnit read back, the summary and annotations point at the line
that failed (the test's own line stays its location); the reproduce command pasted into a real shell."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ci_shards.junit.read import parse_junit
from ci_shards.model.failures import FailureKind, FailureRecord
from ci_shards.model.outcome import Outcome, ShardStatus
from ci_shards.model.plan import Granularity, Plan, ShardPlan
from ci_shards.report import github
from ci_shards.report.aggregate import decide
from ci_shards.report.artifacts import ShardArtifact
from ci_shards.report.failures import pytest_command
from ci_shards.report.groups import group_failures
from ci_shards.report.render import render_summary

pytestmark = pytest.mark.e2e

SUITE = {
    "tests/__init__.py": "",
    "tests/helpers.py": """\
        def check(value):
            if value != 2:
                raise ValueError(f"bad value {value}")
            return value
        """,
    "tests/test_lines.py": """\
        import pytest

        from tests.helpers import check


        def test_direct():
            x = 1
            assert x == 2


        @pytest.mark.parametrize("v", [1])
        def test_through_helper(v):
            check(v)
        """,
}


def _verdict(tmp_path: Path):
    for name, text in SUITE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    junit = tmp_path / "junit.xml"
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:ci_shards", "-o", "junit_family=xunit1"]
    subprocess.run([*argv, f"--junitxml={junit}", "tests"], cwd=tmp_path, capture_output=True, check=False)
    cases = parse_junit(junit)
    plan = Plan(
        total=1,
        granularity=Granularity.TEST,
        shards=(ShardPlan(index=1, items=tuple(c.test_id for c in cases), estimated_seconds=1.0),),
        lower_bound_seconds=1.0,
        unknown_items=0,
        created_at="2026-11-30T00:00:00Z",
    )
    outcome = Outcome(plan_digest=plan.digest, shard_index=1, shard_total=1, status=ShardStatus.FAILED)
    return decide(plan, [ShardArtifact(path=tmp_path, index=1, total=1, outcome=outcome, cases=tuple(cases))])


def test_summary_and_annotations_point_at_the_failing_line(tmp_path: Path) -> None:
    verdict = _verdict(tmp_path)
    assert {c.test_id: c.line for c in verdict.cases} == {
        "tests/test_lines.py::test_direct": 6,  # the def line: the test's location
        "tests/test_lines.py::test_through_helper[1]": 11,  # the decorator line
    }
    summary = render_summary(verdict)
    assert "`tests/test_lines.py:8` (test at `tests/test_lines.py:6`)" in summary
    # the call in the test, not the helper's raise and not the decorator
    assert "`tests/test_lines.py:13` (test at `tests/test_lines.py:11`)" in summary
    # pytest's JUnit text loses the first line's indentation: the summary puts it back
    assert "```text\n    def test_direct():\n        x = 1\n>       assert x == 2\n" in summary
    annotations = [line for line in github.annotation_lines(verdict) if line.startswith("::error ")]
    assert any(line.startswith("::error file=tests/test_lines.py,line=8,") for line in annotations)
    assert any(line.startswith("::error file=tests/test_lines.py,line=13,") for line in annotations)


def test_reproduce_command_is_inert_in_a_real_shell(tmp_path: Path) -> None:
    """The summary's pytest command, pasted into sh, passes each hostile id as one argument and runs nothing else."""
    ids = [
        "tests/test_a.py::test_x[it's]",
        "tests/test_a.py::test_y[$(touch pwned)]",
        'tests/test_a.py::test_z[`touch pwned2`;touch pwned3 & echo \\ " > out]',
        "tests/test_a.py::test_w[${HOME}*?~ {a,b} !!]",
        "tests/test_b.py::test_v[\nnext line]",
    ]
    records = (FailureRecord(shard=1, test_id=i, kind=FailureKind.FAILED, message="m") for i in ids)
    command, left_out = pytest_command(group_failures(records), max_ids=10, max_chars=4000)
    assert left_out == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_pytest = bin_dir / "python"  # `python -m pytest`: prints the arguments after those, NUL-separated
    fake_pytest.write_text(
        f"#!{sys.executable}\nimport sys\nassert sys.argv[1:3] == ['-m', 'pytest']\n"
        "sys.stdout.write('\\0'.join(sys.argv[3:]))\n"
    )
    fake_pytest.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    result = subprocess.run(
        ["sh", "-c", command],
        cwd=work,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.split("\0") == ids
    assert list(work.iterdir()) == []  # nothing was created: no substitution, no second command
