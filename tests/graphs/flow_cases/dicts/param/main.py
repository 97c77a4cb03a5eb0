# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def dispatch(table, key):
    table[key]()

dispatch({"a": a}, "a")
