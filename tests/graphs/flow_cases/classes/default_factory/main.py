# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Impl:
    def __init__(self):
        pass

    def go(self):
        pass


def build(factory=Impl):
    obj = factory()
    obj.go()


build()
