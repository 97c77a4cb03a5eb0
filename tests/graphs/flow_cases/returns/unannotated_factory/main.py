# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Cache:
    def __init__(self):
        pass

    def get(self, key):
        pass


def create(size):
    if size == 0:
        return None
    return Cache()


def lookup():
    cache = create(4)
    cache.get("k")


lookup()
