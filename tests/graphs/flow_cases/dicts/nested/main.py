# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def b():
    pass

d = {"outer": {"inner": a}, "other": b}
d["outer"]["inner"]()
