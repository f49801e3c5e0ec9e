from pytest_bdd import scenario, scenarios

scenarios("cucumbers.feature")


@scenario("cucumbers.feature", "Eating one")
def test_eating_one_by_name():
    pass
