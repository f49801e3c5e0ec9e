"""A module-scoped fixture that is slow to set up: splitting this file re-pays the setup per shard."""

import time

import pytest


@pytest.fixture(scope="module")
def database():
    time.sleep(1.0)  # pretend to create and migrate a database
    return {"users": ["ada", "grace"]}


def test_users_exist(database):
    time.sleep(0.05)
    assert database["users"]


def test_first_user(database):
    time.sleep(0.05)
    assert database["users"][0] == "ada"


def test_user_count(database):
    time.sleep(0.05)
    assert len(database["users"]) == 2


def test_lookup(database):
    time.sleep(0.05)
    assert "grace" in database["users"]
