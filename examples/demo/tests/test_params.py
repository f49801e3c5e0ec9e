import time

import pytest


@pytest.mark.parametrize("n", range(1, 9))
def test_square(n):
    time.sleep(0.05 * n)
    assert n * n >= n
