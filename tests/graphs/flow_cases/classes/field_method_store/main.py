# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A field stored again on an object the module made, by a method whose body
# stores it unconditionally, then directly: the call sees the last store only.
def first():
    pass


def second():
    pass


def third():
    pass


class Holder:
    def __init__(self, fn):
        self.fn = fn

    def change(self, fn):
        """Replace the callback."""
        self.fn = fn


h = Holder(first)
h.change(second)
h.fn()
k = Holder(first)
k.fn = third
k.fn()
