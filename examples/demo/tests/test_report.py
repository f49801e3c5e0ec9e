import time


def test_render_summary():
    time.sleep(0.2)


def test_render_table():
    time.sleep(0.7)


def test_render_chart():
    time.sleep(0.3)
