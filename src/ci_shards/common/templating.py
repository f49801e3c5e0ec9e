"""The one jinja2 environment per folder of ``templates/`` (installed as ``ci_shards.templates``).

StrictUndefined everywhere: a name the caller forgot is an error, never an empty string in a summary or a
workflow. No autoescaping: the outputs are Markdown and YAML, not HTML, so each caller makes untrusted values
inert for its format first (``report.md`` for Markdown; ``init`` quotes YAML scalars).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded when a template is rendered, not when the CLI starts (test_cli_startup.py)
    import jinja2


@cache
def environment(folder: str) -> jinja2.Environment:
    """The environment for ``templates/<folder>/`` (``report`` or ``ci``)."""
    import jinja2  # noqa: PLC0415

    return jinja2.Environment(
        loader=jinja2.PackageLoader("ci_shards.templates", folder),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
