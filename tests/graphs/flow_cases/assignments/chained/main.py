# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def target():
    pass

a = b = target
c = a
c()
