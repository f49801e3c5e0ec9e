"""Making text from tests inert in GitHub Markdown (job summaries, PR comments).

Test names, messages and traces are written by whoever wrote the tests, or by whatever the code
under test printed. In a summary or comment they must never render as Markdown or HTML, ping
people with ``@mentions``, close our ``<details>``/code fences, fake our hidden comment marker,
or carry control characters; and each piece is capped so one huge message cannot crowd out the
report. GitHub renders Markdown with HTML (GFM + a sanitiser): escaping ``& < >`` as entities
and backslash-escaping Markdown punctuation keeps inline text literal; code blocks use a fence
longer than any backtick run inside them (CommonMark §4.5).
"""

from __future__ import annotations

import re
from typing import Final

from ci_shards.console import strip_control

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


def code_inline(text: str, limit: int = 200) -> str:
    """Literal text in an inline code span, in a table cell (``|`` cannot end the cell)."""
    text = " ".join(strip_control(text).split())
    text = cap(text, limit).replace("|", "¦")
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    # code spans are literal (no HTML, no mentions); defusing anyway costs nothing and keeps the
    # marker and @names out of the raw body that other tools may grep
    return f"{fence}{pad}{defuse(text)}{pad}{fence}"


def code_block(text: str, limit: int = 5000) -> str:
    """A fenced block of literal text (a trace or output) that nothing inside can close."""
    text = strip_control(text).rstrip("\n")
    text = cap(text, limit)
    text = defuse(text)
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def summary_text(text: str, limit: int = 200) -> str:
    """Text inside ``<summary>`` (HTML context: Markdown is not rendered there, entities are)."""
    text = " ".join(strip_control(text).split())
    text = cap(text, limit)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    # Markdown punctuation as numeric entities: shown as itself, never parsed as syntax (CommonMark §2.5)
    text = _MD_SPECIAL.sub(lambda m: f"&#{ord(m.group(1))};", text)
    return defuse_links(defuse(text))
