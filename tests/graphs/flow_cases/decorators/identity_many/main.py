# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A decorator that hands back what it receives: each decorated name still holds
# its own function, not every function the decorator ever saw.
def mark(fn):
    fn.marked = True
    return fn

@mark
def first():
    pass

@mark
def second():
    pass

@mark
def third():
    pass

first()
second()
