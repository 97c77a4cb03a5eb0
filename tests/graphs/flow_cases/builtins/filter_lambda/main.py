# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def keep(x):
    return x > 0

list(filter(lambda x: keep(x), [1, -1]))
