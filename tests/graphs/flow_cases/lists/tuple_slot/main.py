# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A container declared as holding fixed-length tuples: a constant index into an
# element reads that slot's declared type (`self._body[i][1]` is an `Item`).
class Item:
    def unwrap(self):
        return 1


class Integer(Item):
    def unwrap(self):
        return 2


class Key:
    def name(self):
        return "k"


class Proxy:
    # Same method names on an unrelated class: a guess by name would reach these.
    def unwrap(self):
        return 3

    def name(self):
        return "p"


class Container:
    def __init__(self):
        self._body: list[tuple[Key, Item]] = [(Key(), Integer())]

    def value_at(self, i):
        value = self._body[i][1]
        return value.unwrap()

    def key_at(self, i):
        return self._body[i][0].name()


def first_value(rows: list[tuple[Key, Item]]):
    return rows[0][1].unwrap()


c = Container()
c.value_at(0)
c.key_at(0)
first_value([(Key(), Item())])
Proxy().unwrap()
Proxy().name()
