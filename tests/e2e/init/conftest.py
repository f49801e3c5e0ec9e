"""The fixtures of the act workflows (tests/e2e/gha/test_act_pytest.py) and of the jest recipe
(tests/e2e/test_recipes.py: a project with jest and jest-junit from npm), shared here."""

from tests.e2e.gha.conftest import act, wheels  # noqa: F401
from tests.e2e.test_recipes import jest_project  # noqa: F401
