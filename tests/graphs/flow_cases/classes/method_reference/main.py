# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class A:
    def m(self):
        pass

    def run(self):
        f = self.m
        f()

A().run()
