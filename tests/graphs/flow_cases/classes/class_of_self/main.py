# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Url(object):
    def __init__(self, url=""):
        self.url = url

    def copy(self):
        return self.__class__(self.url)


class Plain:
    def __init__(self):
        self.n = 0

    def clone(self):
        return self.__class__()


class Counted(Plain):
    def __init__(self):
        super().__init__()
        self.k = 1


Url("a").copy()
Plain().clone()
Counted().clone()
