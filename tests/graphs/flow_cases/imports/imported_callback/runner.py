# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def run(f):
    f()
