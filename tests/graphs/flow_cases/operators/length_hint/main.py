# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Bag:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return "Bag(" + repr(list(self)) + ")"


class Hinted:
    def __iter__(self):
        return iter([3, 1, 2])

    def __length_hint__(self):
        return 3


def freeze(bag: Bag):
    return tuple(bag)


def order(h: Hinted):
    return sorted(h)


def distinct(bag: Bag):
    return set(bag)


b = Bag([2, 1])
repr(b)
freeze(b)
order(Hinted())
distinct(b)
