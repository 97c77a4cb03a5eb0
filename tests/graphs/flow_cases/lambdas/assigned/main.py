# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def helper():
    pass

f = lambda: helper()
f()
