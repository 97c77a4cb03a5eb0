# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def adder(n):
    def add(x):
        return x + n
    return add

plus = adder(1)
plus(2)
