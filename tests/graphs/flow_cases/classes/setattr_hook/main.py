# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Record(object):
    def __init__(self, name):
        self.name = name

    def __setattr__(self, attr, value):
        object.__setattr__(self, attr, value)

    def __delattr__(self, attr):
        object.__delattr__(self, attr)

    def rename(self, name):
        setattr(self, "name", name)


class Plain:
    def __init__(self):
        self.x = 1


def run():
    r = Record("a")
    r.rename("b")
    r.tag = "t"
    del r.tag
    Plain().x = 2


run()
