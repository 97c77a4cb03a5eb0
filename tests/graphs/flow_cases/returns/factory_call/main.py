# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def inner():
    pass

def make():
    return inner

make()()
f = make()
f()
