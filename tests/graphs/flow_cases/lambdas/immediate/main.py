# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def work():
    pass

(lambda: work())()
