# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import sys


def a():
    pass

def b():
    pass

def c():
    pass

d = {"a": a, "b": b}
d[sys.argv[0][:0] + "a"]()
