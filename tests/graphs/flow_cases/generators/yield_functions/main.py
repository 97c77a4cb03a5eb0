# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def b():
    pass

def gen():
    yield a
    yield b

for f in gen():
    f()
