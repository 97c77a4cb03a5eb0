# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A call between the store and the read whose body may store the field again
# (a branch): both values kept.
def first():
    pass


def second():
    pass


class Holder:
    def __init__(self, fn):
        self.fn = fn

    def change(self, fn):
        self.fn = fn


h = Holder(first)


def maybe_reset():
    if len(__name__) > 1:
        h.fn = first


h.change(second)
maybe_reset()
h.fn()
