# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def make_instance(cls):
    return object.__new__(cls)


class Pair:
    def __new__(cls, a):
        return make_instance(cls)

    def __init__(self, a):
        self.a = a


def build():
    return Pair(3)


build()
