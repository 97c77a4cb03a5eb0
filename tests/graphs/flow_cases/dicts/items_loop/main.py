# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def b():
    pass

registry = {"a": a, "b": b}
for name, fn in registry.items():
    fn()
for fn in registry.values():
    fn()
