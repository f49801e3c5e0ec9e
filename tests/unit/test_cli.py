import subprocess
import sys

from ci_shards import __version__
from ci_shards.cli import main


def test_version(capsys):
    assert main(["--version"]) == 0
    assert __version__ in capsys.readouterr().out


def test_unknown_flag_is_a_usage_error_without_traceback(capsys):
    assert main(["--no-such-flag"]) == 2
    err = capsys.readouterr().err
    assert "no-such-flag" in err
    assert "Traceback" not in err


def test_python_dash_m_entry_point():
    done = subprocess.run([sys.executable, "-m", "ci_shards", "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert done.stdout.strip() == f"ci-shards {__version__}"


def test_an_error_naming_a_value_with_a_newline_stays_one_line(tmp_path, monkeypatch, capsys):
    # found by tests/unit/test_cli_fuzz.py: `plan --items $'a\nb'` split the error over two lines, the second
    # free to start with a workflow command (`::error::`) or an escape sequence
    monkeypatch.chdir(tmp_path)
    assert main(["plan", "--items", "a\n::error::x\x1b[2J", "--shards", "2"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "ci-shards: a\\n::error::x\\x1b[2J: cannot read the items list: No such file or directory"
    ]
