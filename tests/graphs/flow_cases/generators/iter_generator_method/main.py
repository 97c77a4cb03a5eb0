# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def item():
    pass

class Bag:
    def __iter__(self):
        yield item

for f in Bag():
    f()
