import time


def test_add():
    time.sleep(0.05)
    assert 1 + 1 == 2


def test_sub():
    time.sleep(0.05)
    assert 5 - 3 == 2


def test_mul():
    time.sleep(0.05)
    assert 3 * 4 == 12


def test_div():
    time.sleep(0.05)
    assert 8 / 2 == 4


def test_pow():
    time.sleep(0.05)
    assert 2**10 == 1024


def test_mod():
    time.sleep(0.05)
    assert 10 % 3 == 1
