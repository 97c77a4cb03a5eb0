# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A generator made in one function and returned, iterated in another: the
# generator's body runs where it is iterated (`yield from`, `for`, `next`).
class Walker:
    def descend(self, items):
        for item in items:
            yield item

    def follow(self, items):
        return self.descend(items)

    def first(self, items):
        return next(self.follow(items), None)


def ref(walker, items):
    yield from walker.follow(items)


def all_of(walker, items):
    for x in walker.follow(items):
        pass


w = Walker()
list(ref(w, [1, 2]))
all_of(w, [3])
w.first([4])
