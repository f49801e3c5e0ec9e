import time


class TestApi:
    def test_get(self):
        time.sleep(0.1)

    def test_post(self):
        time.sleep(0.2)

    def test_put(self):
        time.sleep(0.15)

    def test_delete(self):
        time.sleep(0.1)

    def test_patch(self):
        time.sleep(0.3)
