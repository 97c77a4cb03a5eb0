# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `walk` is also handed around as a value (kept in a table that nothing calls
# through, and returned by `pick`, whose result is called with a Bag): its
# parameter holds what every caller passes, named or through the value.
class Bag:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)


class Pair:
    def __iter__(self):
        yield 1
        yield 2


def walk(things):
    for t in things:
        pass


def pick():
    return walk


registry = {"walk": walk}
walk(Pair())
pick()(Bag([1, 2]))
