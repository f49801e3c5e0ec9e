import time


def test_read_large_file():
    time.sleep(1.0)


def test_write_large_file():
    time.sleep(0.9)


def test_copy_tree():
    time.sleep(0.8)
