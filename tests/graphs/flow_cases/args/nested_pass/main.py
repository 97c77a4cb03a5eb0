# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def leaf():
    pass

def inner(f):
    f()

def outer(f):
    inner(f)

outer(leaf)
