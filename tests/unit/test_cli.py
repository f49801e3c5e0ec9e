import os
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


def test_an_own_argument_that_is_not_utf8_is_refused_naming_it(tmp_path, monkeypatch, capsys):
    # found by tests/unit/test_cli_fuzz.py: `init --install $'\xff'` failed with an internal error (exit 3) while
    # writing its files: no plan, JUnit or CI file can hold the byte
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--install", os.fsdecode(b"make \xff")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "ci-shards: argument 'make \\xff' is not UTF-8 text (ci-shards reads and writes UTF-8 only)"
    ]
    assert list(tmp_path.iterdir()) == []


def test_a_path_the_file_system_refuses_is_exit_2_naming_it(tmp_path, monkeypatch, capsys):
    # found by tests/unit/test_cli_fuzz.py: Path.exists() of Python 3.11 raises on a name over NAME_MAX (255 bytes)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "items.txt").write_text("a.py::t\n")
    long_name = "x" * 300
    assert main(["plan", "--items", "items.txt", "--shards", "1", "--durations", long_name]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("ci-shards: ") and long_name in err[0], err
    assert "File name too long" in err[0] and "internal error" not in err[0]
