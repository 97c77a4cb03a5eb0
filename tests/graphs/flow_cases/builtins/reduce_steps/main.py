# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import functools


def inc(x):
    return x + 1


def dbl(x):
    return x * 2


def start():
    return 1


# reduce calls f(accumulated, element): the elements (here functions) reach the
# second parameter; the first gets the initial value, then f's results.
functools.reduce(lambda acc, step: step(acc), [inc, dbl], start())
