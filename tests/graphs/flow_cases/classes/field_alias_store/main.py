# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# The object aliased, then stored through the alias after the method's store:
# both values kept.
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
alias = h
h.change(second)
alias.fn = first
h.fn()
