# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def inner():
    yield a

def outer():
    yield from inner()

for f in outer():
    f()
