# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def job():
    pass
