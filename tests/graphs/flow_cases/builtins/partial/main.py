# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import functools


def add(a, b):
    return a + b

inc = functools.partial(add, 1)
inc(2)
