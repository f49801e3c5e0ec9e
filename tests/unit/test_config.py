"""Configuration: ci-shards.yml, [tool.ci-shards], validation naming the key."""

from __future__ import annotations

import pytest

from ci_shards.common.errors import ConfigError
from ci_shards.model.plan import Granularity
from ci_shards.options.config import load_config, parse_config


def test_full_yaml_config(tmp_path):
    (tmp_path / "ci-shards.yml").write_text(
        "timings: .ci-shards/timings.json\n"
        "variant: linux-py3.12\n"
        "granularity: file\n"
        "keep-together: [class, 'tests/db/*']\n"
        "weights: {'tests/e2e/*': 1.5}\n"
        "shards: auto\n"
        "target-seconds: 300\n"
        "shard-overhead: 40\n"
        "max-shards: 20\n"
        "max_items_per_shard: 500\n"
        "cut-cost: 2\n"
        "strategy: lpt\n"
    )
    config = load_config(tmp_path)
    assert config.source == "ci-shards.yml"
    assert config.granularity is Granularity.FILE
    assert config.keep_together == ("class", "tests/db/*")
    assert config.weights == {"tests/e2e/*": 1.5}
    assert (config.shards, config.target_seconds, config.shard_overhead) == ("auto", 300.0, 40.0)
    assert (config.max_shards, config.max_items_per_shard, config.cut_cost) == (20, 500, 2.0)


def test_no_config_is_empty(tmp_path):
    assert load_config(tmp_path).source == ""


def test_pyproject_table(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.ci-shards]\nshards = 4\ntimings = "t.json"\n'
    )
    config = load_config(tmp_path)
    assert (config.shards, config.timings) == ("4", "t.json")
    assert "pyproject.toml" in config.source
    (tmp_path / "pyproject.toml").write_text("[tool.ci-shards]\nshard = 4\n")
    with pytest.raises(ConfigError, match="unknown key 'shard'"):
        load_config(tmp_path)


def test_yaml_wins_over_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ci-shards]\nshards = 4\n")
    (tmp_path / "ci-shards.yml").write_text("shards: 2\n")
    assert load_config(tmp_path).shards == "2"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"timing": "x"}, "unknown key 'timing'"),
        ({"granularity": "module"}, "'granularity' must be one of"),
        ({"keep-together": [1]}, "'keep-together' must be a list"),
        ({"weights": ["a"]}, "'weights' must map"),
        ({"weights": {"a": -1}}, "'weights.a' must be a non-negative number"),
        ({"shards": 0}, "'shards' must be a whole number"),
        ({"target-seconds": "fast"}, "'target-seconds' must be a non-negative number"),
        ({"max-shards": 1.5}, "'max-shards' must be a whole number"),
        ({"timings": ""}, "'timings' must be a non-empty string"),
        ({"run": {"timeout": 3}}, "unknown key 'run'"),
        ([1, 2], "expected a mapping"),
    ],
)
def test_bad_config_names_the_key(data, message):
    with pytest.raises(ConfigError) as info:
        parse_config(data, "ci-shards.yml")
    assert str(info.value).startswith("ci-shards.yml: ")
    assert message in str(info.value)


def test_invalid_yaml_names_the_position(tmp_path):
    (tmp_path / "ci-shards.yml").write_text("shards: [1,\n")
    with pytest.raises(ConfigError, match=r"ci-shards.yml: not valid YAML at line \d+, column \d+"):
        load_config(tmp_path)


@pytest.mark.parametrize("name", ["ci-shards.yml", "pyproject.toml"])
def test_a_config_that_is_not_utf8_is_named(tmp_path, name):
    # found by tests/unit/test_cli_fuzz.py: a ci-shards.yml of b"\xff{" was an internal error (exit 3)
    (tmp_path / name).write_bytes(b"[tool.ci-shards]\nshards = 2\n\xff{")
    with pytest.raises(ConfigError, match=f"^{name}: not UTF-8 text \\(byte 28\\)$"):
        load_config(tmp_path)


def test_a_pyproject_whose_tool_is_no_table_has_no_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text('tool = "ci-shards"\n')
    assert load_config(tmp_path).shards is None


def test_allow_empty_is_a_boolean(tmp_path):
    assert parse_config({"allow-empty": True}, "x").allow_empty is True
    with pytest.raises(ConfigError, match="'allow-empty' must be true or false"):
        parse_config({"allow-empty": "yes"}, "x")
    assert load_config(tmp_path).allow_empty is None
    (tmp_path / "ci-shards.yml").write_text("allow-empty: true\n")
    assert load_config(tmp_path).allow_empty is True


def test_workers_is_a_count_or_auto() -> None:
    assert parse_config({"workers": 4}, "ci-shards.yml").workers == "4"
    assert parse_config({"workers": "auto"}, "ci-shards.yml").workers == "auto"
    for bad in (0, "two", True, 1.5):
        with pytest.raises(ConfigError, match="'workers' must be a whole number ≥ 1 or 'auto'"):
            parse_config({"workers": bad}, "ci-shards.yml")
