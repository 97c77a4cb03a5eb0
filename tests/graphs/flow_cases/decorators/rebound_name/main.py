# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `@name` applies what the name holds where the decorator sits: a binding
# replaced before the `def` is not applied.
def log(f):
    return f

def trace(f):
    return f

deco = log
deco = trace

@deco
def work():
    pass

deco = log

work()
