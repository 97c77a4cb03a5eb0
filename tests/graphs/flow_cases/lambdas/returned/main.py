# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def work():
    pass

def make():
    return lambda: work()

make()()
