# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def b():
    pass

d = {"a": a}
d.update({"b": b})
d["b"]()
d.get("a")()
