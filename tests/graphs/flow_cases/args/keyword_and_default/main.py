# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def one():
    pass

def two():
    pass

def run(a, hook=one):
    hook()
    a()

run(two)
run(a=one, hook=two)
