# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def b():
    pass

d = {}
d["x"] = a
d["y"] = b
d["y"]()
