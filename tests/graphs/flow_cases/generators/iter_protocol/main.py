# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def item():
    pass

class Seq:
    def __init__(self):
        self.done = False

    def __iter__(self):
        return self

    def __next__(self):
        if self.done:
            raise StopIteration
        self.done = True
        return item

for f in Seq():
    f()
