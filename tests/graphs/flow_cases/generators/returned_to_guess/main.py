# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# The functions iterating `walker.follow(...)` are called only through a table,
# so `walker` has no known class and `follow` is found by its name; the
# generator `follow` returns still runs where it is iterated.
class Walker:
    def descend(self, items):
        for item in items:
            yield item

    def follow(self, items):
        return self.descend(items)


def ref(walker, items):
    yield from walker.follow(items)


def every(walker, items):
    for x in walker.follow(items):
        pass


KEYWORDS = {"ref": ref, "every": every}


def run(w):
    for name in ("ref", "every"):
        result = KEYWORDS[name](w, [1, 2])
        if result is not None:
            list(result)


run(Walker())
