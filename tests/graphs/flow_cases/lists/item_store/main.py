# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def b():
    pass

fs = [a]
fs[0] = b
fs[0]()
