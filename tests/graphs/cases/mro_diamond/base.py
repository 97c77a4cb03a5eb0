# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class A:
    def who(self):
        return "A"

    def hello(self):
        return self.who()


class B(A):
    def who(self):
        return "B"
