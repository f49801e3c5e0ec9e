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
