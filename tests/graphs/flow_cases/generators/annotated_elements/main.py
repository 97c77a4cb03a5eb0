# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Item:
    def __init__(self):
        pass

    def size(self):
        return 1


def total(items: list[Item]):
    n = 0
    for it in items:
        n += it.size()
    return n + sum(x.size() for x in items)


total([Item()])
