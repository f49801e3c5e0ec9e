import time


def test_connect():
    time.sleep(0.5)


def test_retry_backoff():
    time.sleep(0.6)


def test_disconnect():
    time.sleep(0.4)
