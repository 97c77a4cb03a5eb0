# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def b():
    pass

def run():
    g = lambda: a()
    h = lambda: b()
    return g()

run()
