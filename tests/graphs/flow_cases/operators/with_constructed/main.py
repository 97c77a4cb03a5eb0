# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Resource:
    def __init__(self):
        self.open = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.open = False
        return False

    def use(self):
        pass


def work():
    with Resource():
        pass


with Resource() as res:
    res.use()
work()
