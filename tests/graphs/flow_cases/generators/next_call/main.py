# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def gen():
    yield a

g = gen()
next(g)()
