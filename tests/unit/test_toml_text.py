"""common/toml_text.py: the one TOML reader, tomllib's on 3.11+ and tomli's on 3.10, refusing as tomllib does."""

from __future__ import annotations

import pytest

from ci_shards.common import toml_text


def test_a_document_reads_as_tomllib_reads_it() -> None:
    text = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\naddopts = "-q"\n[tool.ci-shards]\nshards = 4\n'
    assert toml_text.loads(text) == {
        "tool": {"pytest": {"ini_options": {"testpaths": ["tests"], "addopts": "-q"}}, "ci-shards": {"shards": 4}}
    }


@pytest.mark.parametrize("text", ["[tool", "a = 1\na = 2\n", "x = " + "[" * 5_000 + "]" * 5_000])
def test_every_refusal_is_a_value_or_recursion_error(text: str) -> None:
    with pytest.raises((ValueError, RecursionError)):
        toml_text.loads(text)
