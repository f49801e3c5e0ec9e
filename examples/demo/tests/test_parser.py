import json
import time


def test_parse_empty():
    time.sleep(0.05)
    assert json.loads("{}") == {}


def test_parse_list():
    time.sleep(0.1)
    assert json.loads("[1, 2]") == [1, 2]


def test_parse_nested():
    time.sleep(0.3)
    assert json.loads('{"a": {"b": 1}}')["a"]["b"] == 1


def test_parse_unicode():
    time.sleep(0.05)
    assert json.loads('"\\u00e9"') == "\u00e9"
