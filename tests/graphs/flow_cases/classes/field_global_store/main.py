# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A field stored by a function called at module level: through the module
# variable it reads as a global, or through a parameter given the object.
def first():
    pass


def second():
    pass


def third():
    pass


class Holder:
    def __init__(self, fn):
        self.fn = fn


h = Holder(first)


def swap():
    h.fn = second


def put(target, fn):
    target.fn = fn


swap()
h.fn()
put(h, third)
h.fn()
