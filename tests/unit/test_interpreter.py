"""Which Python runs ``--pytest``: the flag, else the active virtualenv when ci-shards runs from another, else
ci-shards' own; one line (exit 2) for an interpreter that cannot run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ci_shards
from ci_shards.common.errors import UsageError
from ci_shards.common.interpreter import Interpreter, choose_python, plugin_env, probe


def test_the_flag_wins_over_the_active_virtualenv():
    env = {"VIRTUAL_ENV": "/work/proj/.venv"}
    assert (
        choose_python("/opt/py/bin/python", env, running="/tools/bin/python", prefix="/tools") == "/opt/py/bin/python"
    )


def test_an_active_virtualenv_other_than_ci_shards_own_is_the_default():
    env = {"VIRTUAL_ENV": "/work/proj/.venv"}
    assert choose_python(None, env, running="/tools/bin/python", prefix="/tools") == "/work/proj/.venv/bin/python"


def test_ci_shards_own_venv_active_or_none_keeps_its_interpreter(tmp_path: Path):
    own = str(tmp_path)
    assert choose_python(None, {"VIRTUAL_ENV": own}, running="/x/bin/python", prefix=own) == "/x/bin/python"
    assert choose_python(None, {}, running="/x/bin/python", prefix=own) == "/x/bin/python"


def test_ci_shards_own_interpreter_is_probed_as_ours():
    found = probe(sys.executable, {})
    assert found.is_ours and found.version == sys.version.split()[0]


def test_an_interpreter_that_cannot_start_is_one_line(tmp_path: Path):
    missing = tmp_path / "no-python"
    with pytest.raises(UsageError) as raised:
        probe(str(missing), {})
    assert str(raised.value) == f"--python {missing}: cannot run it (No such file or directory)"


def test_another_environment_gets_a_shim_linking_this_ci_shards_package(tmp_path: Path):
    # the link must name the package itself (the folder holding pytest_plugin.py), wherever the module that
    # makes it lives inside the package
    foreign = Interpreter(path="/other/bin/python", prefix=str(tmp_path / "other"), version="3.12.0")
    env = plugin_env(foreign, {"PYTHONPATH": "/mine"}, tmp_path / "shim")
    assert env["PYTHONPATH"].split(":") == [str(tmp_path / "shim"), "/mine"]
    link = tmp_path / "shim" / "ci_shards"
    assert link.resolve() == Path(ci_shards.__file__).resolve().parent
    assert (link / "pytest_plugin.py").is_file()


def test_a_python_older_than_ci_shards_supports_is_one_line(tmp_path: Path):
    # the plugin is imported into the tests' interpreter, which ci-shards' requires-python never checked there
    fake = tmp_path / "python3.9"
    fake.write_text("#!/bin/sh\nprintf '/old\\n3.9.18\\n0\\n0\\n'\n")
    fake.chmod(0o755)
    with pytest.raises(UsageError) as raised:
        probe(str(fake), {})
    assert str(raised.value) == f"--python {fake} is Python 3.9.18: ci-shards' pytest plugin needs Python 3.10 or newer"
