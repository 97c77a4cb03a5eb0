# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def b():
    pass

def call_all(*fns):
    for f in fns:
        f()

call_all(a, b)
