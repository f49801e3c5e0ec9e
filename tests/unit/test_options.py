"""The option declarations (ci_shards.options) against everything that repeats them: the parser, the config
checks, docs/configuration.md's key table and action.yml's inputs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ci_shards.cli import build_parser, main
from ci_shards.commands import COMMANDS
from ci_shards.gha.inputs import Folders, aggregate_argv, comment_argv, plan_argv, run_argv
from ci_shards.options import config
from ci_shards.options.declared import ACTION_ONLY_INPUTS, CONFIG_KEYS, OPTIONS
from ci_shards.options.docs import flag_text, with_table
from ci_shards.options.spec import ConfigKind, Option, given_flags
from ci_shards.options.typed import aggregate_options, plan_options
from tests.unit.golden import REGEN_ENV, regenerating

REPO = Path(__file__).resolve().parents[2]
CONFIGURATION = REPO / "docs" / "configuration.md"
KEYS = {k.name: k for k in CONFIG_KEYS}


def test_docs_key_table_is_the_declared_one() -> None:
    page = CONFIGURATION.read_text(encoding="utf-8")
    expected = with_table(page)
    if regenerating():
        CONFIGURATION.write_text(expected, encoding="utf-8")
        page = expected
    assert page == expected, f"docs/configuration.md's key table differs from the declarations: {REGEN_ENV}=1"


def test_a_changed_declaration_changes_the_docs_table() -> None:
    page = CONFIGURATION.read_text(encoding="utf-8")
    assert "`--shards`" in page
    renamed = [o if o.name != "--shards" else Option(**{**vars(o), "flags": ("--shard-count",)}) for o in OPTIONS]
    assert flag_text(KEYS["shards"], renamed) == "`--shard-count`"
    assert flag_text(KEYS["fail-on"]) == "`aggregate --fail-on`"  # a flag plan lacks names its subcommand


def test_every_config_key_of_an_option_is_declared_and_every_key_is_read() -> None:
    read = {o.config for o in OPTIONS if o.config is not None}
    assert read <= set(KEYS), f"options name undeclared keys: {sorted(read - set(KEYS))}"
    for key in CONFIG_KEYS:
        assert key.name in read or key.flag_text, f"config key {key.name}: no option reads it and no flag text"


@pytest.mark.parametrize("key", CONFIG_KEYS, ids=lambda k: k.name)
def test_config_checks_follow_the_declared_kind(key) -> None:
    """A simple key's value is checked as its option's value is typed; a custom key has its own parser."""
    options = [o for o in OPTIONS if o.config == key.name]
    if key.kind is ConfigKind.CUSTOM:
        assert key.field in (*config._CUSTOM, *config._SELECTION_KEYS)
        return
    assert key.field not in config._CUSTOM
    expected = {
        ConfigKind.NUMBER: lambda o: o.type is float,
        ConfigKind.COUNT: lambda o: o.type is int,
        ConfigKind.BOOL: lambda o: o.action in ("store_true", "store_false"),
        ConfigKind.CHOICE: lambda o: o.choices is not None,
        ConfigKind.STRING: lambda o: o.type is None and o.action in (None, "append"),
    }[key.kind]
    assert options and all(expected(o) for o in options), key.name
    with pytest.raises(config.ConfigError, match=f"'{key.name}' must be"):
        config.parse_config({key.name: [] if key.kind is not ConfigKind.STRING else ""}, "ci-shards.yml")


def test_config_rejects_a_key_nothing_declares() -> None:
    with pytest.raises(config.ConfigError, match="unknown key 'shard'"):
        config.parse_config({"shard": 2}, "ci-shards.yml")


def test_each_subcommand_declares_a_flag_once() -> None:
    for command in ("plan", "matrix", "run", "local", "aggregate", "comment"):
        flags = [f for o in OPTIONS if command in o.commands for f in o.flags]
        assert len(flags) == len(set(flags)), command


def test_flag_over_config_over_default() -> None:
    values = vars(build_parser().parse_args(["plan", "--items", "i.txt", "--cut-cost", "3"]))
    configured = config.parse_config({"cut-cost": 5, "strategy": "lpt", "max-shards": 7}, "ci-shards.yml")
    options = plan_options(values, configured)
    assert (options.cut_cost, options.strategy, options.max_shards) == (3.0, "lpt", 7)
    assert options.given == ("--items", "--cut-cost")
    defaults = plan_options(values, config.Config())
    assert (defaults.strategy, defaults.max_shards, defaults.select.value) == ("balanced", 256, "off")


def test_given_flags_ignore_defaults() -> None:
    values = vars(build_parser().parse_args(["run", "--shard", "1/2", "--retries", "0", "--grace", "3s"]))
    assert given_flags(values, [o for o in OPTIONS if "run" in o.commands]) == ["--shard", "--grace"]


def test_a_zero_is_a_given_value_not_an_absent_flag() -> None:
    values = vars(build_parser().parse_args(["plan", "--items", "i.txt", "--shards", "2", "--shard-overhead", "0"]))
    assert "--shard-overhead" in given_flags(values, [o for o in OPTIONS if "plan" in o.commands])


# --- action.yml ---------------------------------------------------------------------------------------------

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
SAMPLE = {"shards": "2", "target-seconds": "60", "timeout": "5m", "retries": "1", "durations": "d.json", "pr": "7"}


def test_every_action_input_is_a_declared_option_or_action_only() -> None:
    declared = {o.action_input for o in OPTIONS if o.action_input is not None}
    inputs = set(ACTION["inputs"])
    assert declared <= inputs, f"declared inputs action.yml lacks: {sorted(declared - inputs)}"
    assert not declared & set(ACTION_ONLY_INPUTS)
    unmapped = inputs - declared - set(ACTION_ONLY_INPUTS)
    assert not unmapped, f"action.yml inputs that map to no declared option: {sorted(unmapped)}"


def _sample(option: Option) -> str:
    if option.action in ("store_true", "store_false") or option.action_input in ("discover", "pytest"):
        return "true"
    return option.choices[0] if option.choices else SAMPLE.get(option.action_input or "", "x")


@pytest.mark.parametrize("option", [o for o in OPTIONS if o.action_input], ids=lambda o: f"{o.name}:{o.action_input}")
def test_each_declared_input_becomes_its_option(option: Option) -> None:
    """The input, set, reaches the option's flag (or positional) in the argv of a step whose command takes it."""
    assert option.action_input is not None
    inputs = {"test-command": "go test", option.action_input: _sample(option)}
    if option.action_input in ("pytest", "pytest-args") or option.name == "--discover":
        inputs["pytest"] = "true"
    if option.name == "--pytest" and "plan" in option.commands:
        inputs["discover"] = "false"  # with discover (the default) the plan step finds the files on disk
    folders = Folders(Path("/tmp/runner"))
    argvs = {
        "matrix": plan_argv(inputs, folders, timings_exist=True),
        "run": run_argv(inputs, folders),
        "aggregate": aggregate_argv(inputs, folders),
        "comment": comment_argv(inputs, folders),
    }
    argv = next(argvs[c] for c in argvs if c in option.commands)
    parsed = build_parser().parse_args(argv)
    assert getattr(parsed, option.key) not in (None, False, [], ()), (option.name, argv)


def test_no_argparse_private_attribute_in_the_code() -> None:
    for path in (REPO / "src" / "ci_shards").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for private in ("_option_string_actions", "._actions", "_SubParsersAction"):
            assert private not in text, f"{path.relative_to(REPO)} uses argparse's private {private}"


def test_every_subcommand_of_the_table_is_parsed_and_takes_debug(capsys: pytest.CaptureFixture[str]) -> None:
    for command in COMMANDS:
        assert main([*command.path, "--help"]) == 0
        assert "--debug" in capsys.readouterr().out, command.path
    args = build_parser().parse_args(["timings", "merge", "a.json", "-o", "-", "--debug"])
    assert args.debug is True
    assert args.handler is next(c.handler for c in COMMANDS if c.path == ("timings", "merge"))


def test_aggregate_reads_fail_on_and_allow_empty_from_the_config_under_its_flags() -> None:
    argv = ["aggregate", "--plan", "p.json", "shards"]
    configured = config.parse_config({"fail-on": "new", "allow-empty": True}, "ci-shards.yml")
    options = aggregate_options(vars(build_parser().parse_args(argv)), configured)
    assert (options.fail_on, options.allow_empty, options.config_source) == ("new", True, "ci-shards.yml")
    flagged = aggregate_options(vars(build_parser().parse_args([*argv, "--fail-on", "any"])), configured)
    assert flagged.fail_on == "any"
    assert aggregate_options(vars(build_parser().parse_args(argv)), config.Config()).allow_empty is False
