# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# An operator whose operand is not a name but a call (`Expr() + b`,
# `a.copy() | b`) or another operator's result (`(a + b) * 2`, `~a + b`) runs
# the special method of that value's class, as for a name holding it.


class Expr:
    def __add__(self, other):
        return And([self, other])

    def __mul__(self, n):
        return And([self] * n)

    def __or__(self, other):
        return Or([self, other])

    def __invert__(self):
        return Not([self])

    def copy(self):
        return Expr()


class And(Expr):
    def __init__(self, items):
        self.items = items


class Or(Expr):
    def __init__(self, items):
        self.items = items


class Not(Expr):
    def __init__(self, items):
        self.items = items


def build(a: Expr, b: Expr):
    x = Expr() + b
    y = (a + b) * 2
    z = ~a + b
    w = a.copy() | b
    return x, y, z, w


build(Expr(), Expr())
