import time


def test_upper():
    time.sleep(0.05)
    assert "a".upper() == "A"


def test_split():
    time.sleep(0.05)
    assert "a,b".split(",") == ["a", "b"]


def test_join():
    time.sleep(0.05)
    assert "-".join("ab") == "a-b"


def test_strip():
    time.sleep(0.05)
    assert " x ".strip() == "x"
