"""The act binary and the pip cache of the act workflows (tests/e2e/gha/test_act_pytest.py), shared here."""

from tests.e2e.gha.test_act_pytest import act, pip_cache  # noqa: F401
