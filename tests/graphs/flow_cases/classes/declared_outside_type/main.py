# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import typing


class LRUCache:
    def get(self, key):
        return None

    def __setitem__(self, key, value):
        pass


class Projector:
    def __call__(self, x):
        return x


# Declared as an outside type, assigned a project object: the object is a subtype
# of the declaration, so its methods are what runs.
_cache: typing.MutableMapping[str, int] = LRUCache()


def lookup(key):
    found = _cache.get(key)
    _cache[key] = 1
    return found


class Model:
    def __init__(self):
        self.proj: typing.Callable[[int], int] = Projector()

    def forward(self, x):
        return self.proj(x)


lookup("a")
Model().forward(1)
