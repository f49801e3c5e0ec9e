"""local.py's ETA: paced by finished shards, and never "overdue" while work remains."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ci_shards.local import Eta, estimate_eta, fmt_eta

seconds = st.floats(min_value=0, max_value=1e5, allow_nan=False)


def test_fresh_plan_running_past_the_estimates_is_open_ended_not_overdue():
    # a plan with no timings guesses 1 s per item; the shards take minutes
    estimates = {1: 2.0, 2: 2.0, 3: 2.0}
    eta = estimate_eta(100.0, {1: 0.0, 2: 0.0}, [3], estimates, jobs=2)
    assert eta.open_ended
    assert fmt_eta(eta) == "at least 1.0s (running past the estimates)"
    eta = estimate_eta(100.0, {3: 0.0}, [], estimates, jobs=2)
    assert fmt_eta(eta) == "unknown (running past the estimates)"


def test_finished_shards_pace_the_estimates():
    estimates = {1: 10.0, 2: 10.0, 3: 10.0}
    # shard 1 took 30 s for an estimate of 10: the others are expected to take 3x too
    eta = estimate_eta(40.0, {2: 30.0}, [3], estimates, jobs=1, finished=[(10.0, 30.0)])
    assert not eta.open_ended
    assert eta.seconds == (30.0 - 10.0) + 30.0
    assert fmt_eta(eta) == "50.0s"


def test_shards_that_finished_early_do_not_make_a_running_one_past_the_estimates():
    # issue 27: `ETA at least 0.2s (running past the estimates)` right after shards finished under their estimates
    estimates = {1: 10.0, 2: 10.0, 3: 1.0}
    eta = estimate_eta(3.0, {2: 0.0}, [3], estimates, jobs=1, finished=[(10.0, 2.0)])  # pace 0.2: 2 s paced
    assert not eta.open_ended and "past the estimates" not in fmt_eta(eta)
    assert eta.seconds == (10.0 - 3.0) + 1.0 * 0.2
    late = estimate_eta(12.0, {2: 0.0}, [], estimates, jobs=1, finished=[(10.0, 2.0)])  # past its own 10 s too
    assert fmt_eta(late) == "unknown (running past the estimates)"


@given(
    st.dictionaries(st.integers(1, 5), seconds, min_size=1),
    st.lists(st.integers(6, 9), max_size=4),
    seconds,
    st.lists(st.tuples(seconds, seconds), max_size=4),
    st.integers(1, 4),
)
def test_never_overdue_while_work_remains(started, queue, now, finished, jobs):
    estimates = {i: 1.0 for i in [*started, *queue]}
    text = fmt_eta(estimate_eta(now + max(started.values()), started, queue, estimates, jobs=jobs, finished=finished))
    assert "overdue" not in text
    assert text not in ("0.0s", "")


def test_eta_format():
    assert fmt_eta(Eta(65.0)) == "1m 05s"
