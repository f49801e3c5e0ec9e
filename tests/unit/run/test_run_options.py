"""``run`` and ``local`` refuse option values that would crash or silently change the run (exit 2, one line)."""

from __future__ import annotations

import signal

import pytest

from ci_shards.cli import build_parser, main

RUN = ["run", "--plan", "plan.json", "--shard", "1/1"]
LOCAL = ["local", "--items", "items.txt", "--shards", "1"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*RUN, "--signal", "99"], "'99' is not a signal of this platform"),
        ([*RUN, "--signal", "0"], "'0' is not a signal of this platform"),
        ([*RUN, "--signal", "SIGNOPE"], "'SIGNOPE' is not a signal of this platform"),
        ([*LOCAL, "--signal", "99"], "'99' is not a signal of this platform"),
        ([*RUN, "--timeout", "0"], "'0': the timeout must be above 0"),
        ([*RUN, "--timeout", "0s"], "the timeout must be above 0"),
        ([*RUN, "--timeout=-5s"], "'-5s' is not a duration (it must not be negative)"),
        ([*RUN, "--grace=-1s"], "'-1s' is not a duration (it must not be negative)"),
        ([*RUN, "--max-test-seconds", "-1"], "'-1' is not a number of seconds above 0"),
        ([*RUN, "--max-test-seconds", "0"], "'0' is not a number of seconds above 0"),
        ([*RUN, "--max-test-seconds", "nan"], "'nan' is not a number of seconds above 0"),
        ([*RUN, "--max-test-seconds", "inf"], "'inf' is not a number of seconds above 0"),
        ([*LOCAL, "--max-test-seconds", "nan"], "'nan' is not a number of seconds above 0"),
        ([*LOCAL, "--job-memory", "0"], "'0' is not a size above 0"),
        ([*LOCAL, "--job-memory", "infG"], "'infG' is not a size above 0"),
        ([*LOCAL, "--job-memory", "nan"], "'nan' is not a size above 0"),
        ([*LOCAL, "--job-memory=-1"], "'-1' is not a size above 0"),
        ([*LOCAL, "--job-memory", "0.1"], "'0.1' is not a size above 0"),
    ],
)
def test_bad_values_are_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_good_values_parse() -> None:
    args = build_parser().parse_args(
        [*RUN, "--signal", "term", "--timeout", "1.5m", "--grace", "0", "--max-test-seconds", "2.5", "--", "true"]
    )
    assert (args.graceful_signal, args.timeout, args.grace, args.max_test_seconds) == (signal.SIGTERM, 90.0, 0.0, 2.5)
    assert build_parser().parse_args([*RUN, "--signal", "9"]).graceful_signal == signal.SIGKILL
    assert build_parser().parse_args([*LOCAL, "--job-memory", "1.5g"]).job_memory == 3 << 29
    assert build_parser().parse_args([*LOCAL, "--job-memory", "512MiB"]).job_memory == 512 << 20
