# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def b():
    pass

def table():
    return {"a": a, "b": b}

table()["b"]()
