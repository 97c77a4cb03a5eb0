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


Url("a").copy()
Plain().clone()
