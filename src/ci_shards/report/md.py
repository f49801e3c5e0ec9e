"""Making text from tests inert in GitHub Markdown (job summaries, PR comments).

Test names, messages and traces are written by whoever wrote the tests, or by whatever the code
under test printed. In a summary or comment they must never render as Markdown or HTML, ping
people with ``@mentions``, close our ``<details>``/code fences, fake our hidden comment marker,
or carry control characters; and each piece is capped so one huge message cannot crowd out the
report. GitHub renders Markdown with HTML (GFM + a sanitiser): escaping ``& < >`` as entities
and backslash-escaping Markdown punctuation keeps inline text literal; code blocks use a fence
longer than any backtick run inside them (CommonMark §4.5). Code stays code: nothing renders
inside a code span or block, so there the text is kept exactly (no zero-width characters that
would break copy-paste of a trace); our hidden marker is safe there too, since it only counts as
a comment's first line (comment.find_comments).
"""

from __future__ import annotations

import re
from typing import Final

from ci_shards.common.console import strip_control

ZWSP: Final = "\u200b"  # breaks "@name" and "<!--" without changing what people read
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>-])")
_MENTION = re.compile(r"@(?=[A-Za-z0-9-])")
_BACKTICKS = re.compile(r"`+")
# GFM "extended autolinks" make https://host, http://host and www.host clickable in any text
# (github.github.com/gfm/#autolinks-extension-); a zero-width space right after "://" or before
# the dot of "www." leaves no valid domain to link. Any scheme, not just http(s): cheap and safe.
_SCHEME = re.compile(r"://(?=\S)")
_WWW = re.compile(r"(?i)\b(www)\.")


def cap(text: str, limit: int) -> str:
    """At most ``limit`` characters, saying how many were cut."""
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 0)
    return f"{text[:keep]}… [{len(text) - keep} more characters]"


def defuse(text: str) -> str:
    """@mentions and comment openers broken with a zero-width space (stays readable)."""
    return _MENTION.sub("@" + ZWSP, text).replace("<!--", "<!" + ZWSP + "--")


def defuse_links(text: str) -> str:
    """``https://x`` and ``www.x`` no longer autolinked (read the same; copying needs a retype)."""
    return _WWW.sub(r"\1" + ZWSP + ".", _SCHEME.sub("://" + ZWSP, text))


def inline(text: str, limit: int = 300) -> str:
    """One line of literal text for a paragraph or table cell."""
    text = " ".join(strip_control(text).split())
    text = cap(text, limit)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return defuse_links(_MENTION.sub("@" + ZWSP, text))


def code_inline(text: str, limit: int = 200, *, table: bool = False) -> str:
    """Literal text in an inline code span. Code is shown as written: no zero-width characters
    (mentions, links and HTML do not work in code; the characters would only break copy-paste).
    ``table``: the span sits in a table cell, where GFM splits cells on ``|`` before it parses code
    spans; ``\\|`` is the cell's own escape and shows as ``|`` (github.github.com/gfm/#tables-extension-)."""
    text = " ".join(strip_control(text).split())
    text = cap(text, limit)
    if table:
        text = text.replace("|", "\\|")
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, limit: int = 5000, lang: str = "text") -> str:
    """A fenced block of literal text (a trace or output) that nothing inside can close: the fence
    is longer than any backtick run in it (CommonMark §4.5). Lines are kept as written, indentation
    included; only control characters go."""
    text = strip_control(text).rstrip()
    text = cap(text, limit)
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


_FENCE_LINE = re.compile(r" {0,3}(`{3,})(.*)")


def open_fence(text: str) -> str:
    """The fence of a code block still open at the end of ``text`` ("" when none is): what a cut
    must append to stay valid Markdown. Follows CommonMark §4.5: a backtick fence closes only on a
    line of at least as many backticks and nothing else."""
    current = ""
    for line in text.split("\n"):
        match = _FENCE_LINE.fullmatch(line)
        if not match:
            continue
        run, rest = match.groups()
        if not current:
            if "`" not in rest:
                current = run
        elif len(run) >= len(current) and not rest.strip():
            current = ""
    return current


def summary_text(text: str, limit: int = 200) -> str:
    """Text inside ``<summary>`` (HTML context: Markdown is not rendered there, entities are)."""
    text = " ".join(strip_control(text).split())
    text = cap(text, limit)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    # Markdown punctuation as numeric entities: shown as itself, never parsed as syntax (CommonMark §2.5)
    text = _MD_SPECIAL.sub(lambda m: f"&#{ord(m.group(1))};", text)
    return defuse_links(defuse(text))
