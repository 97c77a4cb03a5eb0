# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import functools


def traced(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


@traced
def compute(x):
    return x


@functools.lru_cache(maxsize=None)
def cached(x):
    return compute(x)


class Model:
    @functools.cache
    def size(self):
        return 1

    def forward(self):
        return self.size() + cached(1)
