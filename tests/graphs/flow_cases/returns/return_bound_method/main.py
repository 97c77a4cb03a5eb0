# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class A:
    def run(self):
        pass

    def get(self):
        return self.run

A().get()()
