# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def ident(f):
    return f

def work():
    pass

ident(work)()
