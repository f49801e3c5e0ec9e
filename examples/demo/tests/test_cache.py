import time


def test_cache_hit():
    time.sleep(0.1)


def test_cache_miss():
    time.sleep(0.2)


def test_cache_evict():
    time.sleep(0.15)


def test_cache_ttl():
    time.sleep(0.1)
