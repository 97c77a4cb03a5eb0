# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A store in one arm of an if: the call may see either value (both kept).
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
if len(__name__) > 1:
    h.change(second)
h.fn()
