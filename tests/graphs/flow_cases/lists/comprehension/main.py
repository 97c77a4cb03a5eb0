# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    return 1

def b():
    return 2

results = [f() for f in (a, b)]
