# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def f1():
    pass

def f2():
    pass

def main_fn():
    x = f1
    x()
    x = f2
    x()

main_fn()
