"""md.py: code stays code (exactly as written, unbreakable fences), text outside code stays inert.

Checked with a real CommonMark parser (markdown-it-py, with GFM tables) rather than by pattern."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from ci_shards.common.console import strip_control
from ci_shards.report import md

PARSER = MarkdownIt("commonmark").enable("table")
# what a hostile trace may hold: fences of every length, tildes, HTML, mentions, pipes, indentation
TRACE_TEXT = st.text(alphabet=st.sampled_from(list("`~ \n\t<>!-@|*_[]()#abc:/.")), max_size=300)


def _fences(markdown: str) -> list[str]:
    return [t.content for t in PARSER.parse(markdown) if t.type == "fence"]


@given(TRACE_TEXT)
def test_code_block_is_one_block_holding_the_text_exactly(text):
    expected = strip_control(text).rstrip()
    document = f"before\n\n{md.code_block(text)}\n\nafter `x`\n"
    tokens = PARSER.parse(document)
    assert [t.content for t in tokens if t.type == "fence"] == [expected + "\n"]
    assert "\u200b" not in md.code_block(text)
    assert md.open_fence(document) == ""  # our own fence tracker agrees the block is closed


def test_code_block_keeps_indentation_mentions_and_pipes():
    trace = "    def test_x(self):\n>       assert f('@octocat', 'a|b') == 'https://x.io'\nE   <!-- hi -->"
    assert _fences(md.code_block(trace)) == [trace + "\n"]


@given(st.text(alphabet=st.sampled_from(list("`| @ab<>\\")), max_size=60))
def test_code_inline_is_one_span_holding_the_text_in_a_paragraph_and_a_table_cell(text):
    expected = " ".join(text.split())
    paragraph = PARSER.parse(f"see {md.code_inline(text)} here\n")
    spans = [c.content for t in paragraph if t.children for c in t.children if c.type == "code_inline"]
    # CommonMark strips one space of padding from both ends: our pad exists only for edge backticks
    assert spans == [expected if expected.strip() else spans[0]]
    table = PARSER.parse(f"| test | time |\n|---|---:|\n| {md.code_inline(text, table=True)} | 1s |\n")
    cells = [t for t in table if t.type == "inline"]
    assert len(cells) == 4  # the pipes in the text did not add cells
    assert [c.content for c in cells[2].children if c.type == "code_inline"] == spans
    assert "\u200b" not in md.code_inline(text, table=True)


@pytest.mark.parametrize(
    ("text", "fence"),
    [
        ("no code", ""),
        ("```text\nopen", "```"),
        ("```text\nx\n```\n", ""),
        ("````text\n```\nstill open", "````"),
        ("````text\n```\n````", ""),
        ("```text\n```` not a closer\n", "```"),
    ],
)
def test_open_fence(text, fence):
    assert md.open_fence(text) == fence


def test_outside_code_keeps_todays_defusing():
    assert md.inline("@x www.y.io") == "@\u200bx www\u200b.y.io"
    assert md.summary_text("<!-- @x") == "&lt;&#33;&#45;&#45; @\u200bx"
