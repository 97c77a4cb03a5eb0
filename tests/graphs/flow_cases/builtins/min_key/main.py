# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def score(x):
    return -x

max([1, 2], key=score)
