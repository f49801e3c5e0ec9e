from pytest_bdd import scenarios

scenarios("skips.feature")
