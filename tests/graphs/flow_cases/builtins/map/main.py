# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def double(x):
    return x * 2

list(map(double, [1, 2]))
