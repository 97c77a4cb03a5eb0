# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def f():
    pass

def g():
    pass

x, y = f, g
y()
