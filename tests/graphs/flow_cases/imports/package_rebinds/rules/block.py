# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def block():
    pass
