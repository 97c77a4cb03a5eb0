# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import functools
from functools import partial


def add(a, b):
    return a + b


class Runner:
    def __init__(self):
        self.cb = partial(self.step, 1)

    def step(self, n):
        return n

    def go(self):
        self.cb()


def run():
    inc = functools.partial(add, 1)
    inc(2)
