# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def b():
    pass

d = {"a": a, "b": b}
d["a"]()
