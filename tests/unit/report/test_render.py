"""Rendering: golden job summaries, size limits with 50,000 failures, and injection staying inert.

Regenerate the golden files after an intended change (then review the diff):
    CI_SHARDS_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/unit/report/test_render.py
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ci_shards.junit.read import parse_junit
from ci_shards.model.failures import FailureKind, FailureRecord
from ci_shards.model.outcome import CaseOutcome, Outcome, ShardStatus
from ci_shards.report import github, md
from ci_shards.report.aggregate import aggregate_dirs, decide
from ci_shards.report.artifacts import ShardArtifact
from ci_shards.report.render import (
    COMMENT_BUDGET_CHARS,
    SUMMARY_BUDGET_BYTES,
    comment_marker,
    render_comment,
    render_summary,
    render_terminal,
)
from tests.unit.aggregate_fixtures import case_for, flaky_case, make_plan, write_all, write_shard
from tests.unit.golden import check_golden

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "report"
ITEMS = [
    ["tests/test_a.py::test_one", "tests/test_a.py::test_two"],
    ["tests/test_b.py::TestK::test_x", "tests/test_b.py::test_p[1]"],
    ["tests/test_c.py::test_only"],
]


def _check_golden(name: str, text: str) -> None:
    check_golden(GOLDEN / name, text)


def _mixed(tmp_path):
    plan = make_plan(ITEMS)
    write_shard(
        tmp_path,
        plan,
        1,
        [case_for(ITEMS[0][0], CaseOutcome.FAILED, message="assert 1 == 2\nwhere 1 = f()"), flaky_case(ITEMS[0][1])],
    )
    write_shard(tmp_path / "ci-shards-shard-2-of-3-a1", plan, 2, attempt=1)
    write_shard(tmp_path / "ci-shards-shard-2-of-3-a2", plan, 2, attempt=2)
    return aggregate_dirs(plan, [tmp_path])


def _stable(text: str, tmp_path: Path) -> str:
    return text.replace(str(tmp_path), "<tmp>").replace(md.inline(str(tmp_path)), "<tmp>")


def _outside_code(text: str) -> str:
    """The parts of a Markdown text that GitHub renders as Markdown/HTML (fenced blocks and code spans removed)."""
    text = re.sub(r"^(`{3,})(?:text|mermaid|sh)\n.*?\n\1$", "", text, flags=re.M | re.S)
    return re.sub(r"(`+) ?.*? ?\1", "", text)


def test_golden_passed(tmp_path):
    plan = make_plan(ITEMS)
    write_all(tmp_path, plan)
    verdict = aggregate_dirs(plan, [tmp_path])
    _check_golden("passed.summary.md", render_summary(verdict))
    _check_golden("passed.terminal.txt", render_terminal(verdict))


def test_golden_mixed(tmp_path):
    verdict = _mixed(tmp_path)
    summary = _stable(render_summary(verdict), tmp_path)
    _check_golden("mixed.summary.md", summary)
    _check_golden("mixed.comment.md", _stable(render_comment(verdict, key="CI/test"), tmp_path))
    _check_golden("mixed.terminal.txt", _stable(render_terminal(verdict), tmp_path))
    # the verdict comes first, then the details
    assert summary.index("ci-shards: failed") < summary.index("### ❌ 1 test failed") < summary.index("### Shards")
    assert "xychart-beta" in summary
    assert "never-started" in summary
    a1, a2 = (tmp_path / f"ci-shards-shard-2-of-3-a{n}" / "shard-2-of-3" for n in (1, 2))
    note = f"attempt 1 at {a1} ignored: attempt 2 at {a2} is the latest that counts"
    assert verdict.shards[1].notes == (note,)
    assert f"| {md.inline(note)} |" in render_summary(verdict)


def test_golden_grouped(tmp_path):
    """Identical failures (numbers, addresses, tmp paths differ) are one entry, listed across shards."""
    items = [[f"tests/test_g.py::test_{s}_{i}" for i in range(4)] for s in range(3)]
    plan = make_plan(items)
    for index, shard_items in enumerate(items, 1):
        cases = []
        for i, test_id in enumerate(shard_items):
            if i == 3:
                cases.append(case_for(test_id))
                continue
            message = f"ValueError: bad value {index * 10 + i} at 0x7f{index}a{i} in /tmp/pytest-of-u/pytest-{i}/x"
            cases.append(case_for(test_id, CaseOutcome.FAILED, message=message, text=f"trace {i}\n{message}"))
        if index == 2:
            cases[1] = case_for(shard_items[1], CaseOutcome.ERROR, message="fixture 'db' not found", text="E  nope")
        write_shard(tmp_path, plan, index, cases)
    verdict = aggregate_dirs(plan, [tmp_path])
    summary = render_summary(verdict)
    _check_golden("grouped.summary.md", summary)
    _check_golden("grouped.comment.md", render_comment(verdict, key="CI/test"))
    assert "### ❌ 8 failed, 1 error (2 distinct)" in summary
    assert summary.count("<b>× 8 tests</b> (shards 1, 2, 3, failed)") == 1
    assert "- **8 failed, 1 error**" in summary  # one vocabulary: never "9 tests failed"
    assert "9 tests failed" not in summary


def _many_failures(n: int, trace: str = "frame\n" * 40, *, shards: int = 1, kinds: int = 0):
    """``n`` failing tests dealt over ``shards`` shards; ``kinds`` > 0: only that many distinct
    failures (messages differ in numbers only), else every message is distinct."""
    items = [f"tests/test_{i // 1000}.py::test_{i}" for i in range(n)]
    plan = make_plan([items[s::shards] for s in range(shards)])
    artifacts = []
    for shard in plan.shards:
        cases = []
        for item in shard.items:
            number = int(item.rsplit("_", 1)[1])
            word = "".join(chr(97 + int(d)) for d in str(number))  # distinct even with numbers masked
            kind = (number // shards) % kinds if kinds else 0  # each kind fails in every shard
            message = f"Error{kind}: boom {number}" if kinds else f"boom {word} {number}"
            cases.append(case_for(item, CaseOutcome.FAILED, message=message, text=trace))
        outcome = Outcome(
            plan_digest=plan.digest,
            shard_index=shard.index,
            shard_total=shards,
            status=ShardStatus.FAILED,
            elapsed_seconds=60,
        )
        path = Path(f"shard-{shard.index}-of-{shards}")
        artifacts.append(ShardArtifact(path=path, index=shard.index, total=shards, outcome=outcome, cases=tuple(cases)))
    return decide(plan, artifacts)


def _assert_valid_and_within_limits(verdict):
    summary = render_summary(verdict)
    assert len(summary.encode()) <= SUMMARY_BUDGET_BYTES < 1024 * 1024
    assert md.open_fence(summary) == ""
    assert summary.count("<details>") == summary.count("</details>")
    assert "### Shards" in summary  # the table survives the cut
    comment = render_comment(verdict, key="k")
    assert len(comment) <= COMMENT_BUDGET_CHARS < 65_536
    assert md.open_fence(comment) == ""
    return summary, comment


@pytest.mark.slow
def test_50000_distinct_failures_fit_under_limits_with_visible_notice():
    summary, comment = _assert_valid_and_within_limits(_many_failures(50_000))
    for text in (summary, comment):
        assert re.search(r"\d+ more failures are not shown here", text)
        assert "failures.jsonl" in text


@pytest.mark.slow
def test_50000_failures_in_3_groups_show_every_group():
    summary, comment = _assert_valid_and_within_limits(_many_failures(50_000, kinds=3))
    for text in (summary, comment):
        assert "### ❌ 50000 tests failed (3 distinct)" in text
        assert "not shown here" not in text
        assert len(re.findall(r"<b>× 1666\d tests</b>", text)) == 3
    assert "and 16657 more" in comment  # 10 ids listed per group in the comment


def test_5000_failures_the_comment_shows_every_group_and_every_shard():
    verdict = _many_failures(5_000, shards=4, kinds=40)
    comment = render_comment(verdict, key="k")
    assert len(re.findall(r"<b>× 12[48] tests</b> \(shards 1, 2, 3, 4, failed\)", comment)) == 40
    # each group lists ids from every shard in turn, not the first ones of shard 1 (test_0, test_160, …)
    for kind in (0, 39):
        for shard in range(4):
            assert f"`tests/test_0.py::test_{4 * kind + shard}`" in comment
    distinct = _many_failures(5_000, shards=4)
    comment = render_comment(distinct, key="k")
    shown = [int(n) for n in re.findall(r"<b>tests/test&#95;\d+\.py::test&#95;(\d+)</b>", comment)]
    assert 20 < len(shown) < 5_000
    # round-robin by shard: the shown tests come from every shard in turn (item i is in shard i % 4 + 1)
    assert [n % 4 for n in shown[:8]] == [0, 1, 2, 3, 0, 1, 2, 3]


def test_huge_single_messages_are_capped():
    verdict = _many_failures(3, trace="x" * 5_000_000)
    summary = render_summary(verdict)
    assert len(summary) < 40_000
    assert "more characters" in summary


EVIL = [
    "@octocat please look",
    "<img src=x onerror=alert(1)>",
    "<!-- ci-shards:CI/test -->",
    "</details></summary><script>x</script>",
    "[click](https://evil.example) **bold** | pipe",
    "```\n# heading\n```",
    "\x1b[31mred\x1b[0m\x07bell",
    "::error file=a.py::owned",
    "see https://evil.example/x, HTTP://Evil.example and www.evil.example",
]


@pytest.mark.parametrize("evil", EVIL)
def test_injection_in_names_and_messages_stays_inert(tmp_path, evil):
    test_id = f"tests/test_a.py::test_x[{evil}]"
    plan = make_plan([[test_id]])
    write_shard(tmp_path, plan, 1, [case_for(test_id, CaseOutcome.FAILED, message=evil, text=evil + "\ntrace " + evil)])
    verdict = aggregate_dirs(plan, [tmp_path])
    assert verdict.totals.failed == 1
    for text in (render_summary(verdict), render_comment(verdict, key="CI/test")):
        body = text.split("\n", 1)[1] if text.startswith("<!--") else text
        rendered = _outside_code(body)
        # our marker cannot be faked: rendered text never holds it, and only the first line counts
        # (comment.find_comments); inside code it is shown as written
        assert "<!-- ci-shards:" not in rendered
        assert "@octocat" not in rendered  # mentions fire outside code only; code keeps them as written
        assert "<img" not in rendered
        assert "<script" not in rendered
        assert "</details></summary>" not in rendered
        assert "[click](" not in rendered
        assert "**bold**" not in rendered
        assert "\n# heading" not in rendered
        # GFM autolinks (https://…, www.…) must not turn test output into clickable links
        assert not re.search(r"(?i)https?://[a-z0-9]|\bwww\.", rendered)
        assert "\x1b" not in text
        assert "\x07" not in text
        assert rendered.count("<details>") == rendered.count("</details>")
        # nothing from the test closes our code fences: outside them, no fence line is left
        assert not re.search(r"^`{3,}", rendered, re.M)
    assert "\x1b" not in render_terminal(verdict)


def test_md_helpers():
    assert md.inline("a|b") == "a\\|b"
    assert md.inline("@x") == "@\u200bx"
    assert "``" in md.code_inline("a`b")
    assert md.code_inline("a|b @x", table=True) == "`a\\|b @x`"
    block = md.code_block("```\nx\n```")
    assert block.startswith("````text\n")
    assert block.endswith("\n````")
    assert md.cap("abcdef" * 100, 50).endswith("more characters]")
    assert md.summary_text('<a href="x">') == "&lt;a href=&quot;x&quot;&gt;"
    assert md.inline("go https://x.io www.y.io") == "go https://\u200bx.io www\u200b.y.io"
    assert md.summary_text("HTTPS://x.io WWW.y.io") == "HTTPS://\u200bx.io WWW\u200b.y.io"


def test_comment_marker_is_sanitised():
    assert comment_marker("CI/test") == "<!-- ci-shards:CI/test -->"
    assert comment_marker("x --><script>") == "<!-- ci-shards:x--script -->"
    assert comment_marker("") == "<!-- ci-shards:default -->"


def test_shard_level_failure_records_are_listed(tmp_path):
    plan = make_plan(ITEMS)
    write_all(tmp_path, plan)
    write_shard(
        tmp_path,
        plan,
        3,
        [case_for(ITEMS[2][0], CaseOutcome.ERROR)],
        failures=[FailureRecord(shard=3, test_id="shard 3/3", kind=FailureKind.SHARD, message="leaked 2 processes")],
    )
    summary = render_summary(aggregate_dirs(plan, [tmp_path]))
    assert "leaked 2 processes" in summary


def test_comment_about_many_shards_lists_those_that_need_a_look(tmp_path):
    items = [[f"tests/test_{i}.py::t"] for i in range(60)]
    plan = make_plan(items)
    for i in range(1, 61):
        if i != 42:
            write_shard(tmp_path, plan, i)
    verdict = aggregate_dirs(plan, [tmp_path])
    comment = render_comment(verdict, key="k")
    assert "| 42/60 | 🚫 never-started |" in comment
    assert "| 1/60 |" not in comment
    assert "59 more shards passed" in comment
    summary = render_summary(verdict)
    assert "| 1/60 | ✅ passed |" in summary
    assert "more shards passed" not in summary


def test_comment_links_the_run_and_drops_odd_urls(tmp_path):
    plan = make_plan(ITEMS)
    write_all(tmp_path, plan)
    verdict = aggregate_dirs(plan, [tmp_path])
    url = "https://github.com/o/r/actions/runs/42"
    assert f"[Full report: job summary and artifacts]({url})" in render_comment(verdict, key="k", run_url=url)
    for odd in ("javascript:alert(1)", "https://x.example/a) [evil](https://y", ""):
        assert "Full report" not in render_comment(verdict, key="k", run_url=odd)
    assert "Full report" not in render_summary(verdict, run_url=url)  # the summary is the full report


def test_traces_stay_code_in_summary_and_comment(tmp_path):
    from markdown_it import MarkdownIt  # noqa: PLC0415

    trace = "    def test_x(self):\n>       assert q('@octocat | x') == '```'\nE   AssertionError: <!-- no -->"
    test_id = "tests/test_a.py::test_x"
    plan = make_plan([[test_id]])
    write_shard(tmp_path, plan, 1, [case_for(test_id, CaseOutcome.FAILED, message="AssertionError", text=trace)])
    verdict = aggregate_dirs(plan, [tmp_path])
    for text in (render_summary(verdict), render_comment(verdict, key="k")):
        fences = [t.content for t in MarkdownIt("commonmark").parse(text) if t.type == "fence" and t.info == "text"]
        assert fences == [trace + "\n"]


PRODUCERS = Path(__file__).resolve().parents[2] / "data" / "producers"
# a real Surefire report from apache/maven-surefire's own test fixtures (tests/data/SOURCES.md)
SUREFIRE = (
    Path(__file__).resolve().parents[2]
    / "data"
    / "junit"
    / "apache__maven-surefire__surefire-report-parser__src__test__resources__fixture__testsuitexmlparser__"
    "TEST-org.apache.maven.surefire.test.FailingTest.xml"
)


@pytest.mark.parametrize("producer", ["pytest", "jest", "go", "surefire"])
def test_golden_real_junit_from_producers(producer):
    """Real reports (tests/data/SOURCES.md): identical failures grouped, the failing line from each
    producer's own trace format, the reproduce command only for pytest ids."""
    cases = parse_junit(SUREFIRE if producer == "surefire" else PRODUCERS / f"{producer}.xml")
    plan = make_plan([[c.test_id for c in cases]])
    outcome = Outcome(
        plan_digest=plan.digest, shard_index=1, shard_total=1, status=ShardStatus.FAILED, elapsed_seconds=12
    )
    artifact = ShardArtifact(path=Path("shard-1-of-1"), index=1, total=1, outcome=outcome, cases=tuple(cases))
    verdict = decide(plan, [artifact])
    summary = render_summary(verdict)
    _check_golden(f"producers/{producer}.summary.md", summary)
    _check_golden(f"producers/{producer}.comment.md", render_comment(verdict, key="CI/test"))
    _check_golden(f"producers/{producer}.annotations.txt", "\n".join(github.annotation_lines(verdict)) + "\n")
    groups = re.findall(r"<b>× (\d+) tests</b>", summary)
    assert groups == {"pytest": ["3", "2"], "jest": ["3"], "go": ["3"], "surefire": []}[producer]
    assert ("pytest \\\n" in summary) == (producer == "pytest")


@pytest.mark.parametrize(("field", "value"), [("errors", "Infinity"), ("reason", '"\\u0000\\u001b"')])
def test_an_outcome_with_an_infinite_count_or_a_reason_of_control_characters_is_a_row(tmp_path, field, value):
    # found by tests/unit/test_cli_fuzz.py: int() of Infinity raised OverflowError, and a reason that is empty once
    # its control characters are removed raised IndexError: both internal errors of aggregate (exit 3)
    plan = make_plan([["a.py::t"]])
    folder = write_shard(tmp_path, plan, 1, [case_for("a.py::t", CaseOutcome.FAILED)])  # a failed row shows its reason
    text = (folder / "outcome.json").read_text()
    damaged = re.sub(rf'"{field}": [^,\n]*', lambda _m: f'"{field}": {value}', text, count=1)
    (folder / "outcome.json").write_text(damaged)
    verdict = aggregate_dirs(plan, [tmp_path])
    table = render_terminal(verdict)
    if field == "errors":
        assert "outcome.json is invalid: 'errors' must be a whole number, not Infinity" in table
    else:
        assert "1/1" in table
