# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from base import A, B


class C(A):
    def who(self):
        return "C"


class D(B, C):
    def greet(self):
        return self.hello()


def run(d: D):
    d.greet()
    d.who()


run(D())
