# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def f():
    pass

def g():
    pass

def h():
    pass

first, *rest = [f, g, h]
for r in rest:
    r()
