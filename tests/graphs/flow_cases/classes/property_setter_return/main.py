# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# Reading a property runs its getter only: the setter's `return self.load(...)`
# (the object itself) is discarded by Python, so `self.url == other.url`
# compares two strings and never calls Url.__eq__ again.
class Url:
    def __init__(self, text):
        self._text = text

    @property
    def url(self):
        return self.tostr()

    @url.setter
    def url(self, value):
        return self.load(value)

    def load(self, value):
        self._text = value
        return self

    def tostr(self):
        return str(self._text)

    def __eq__(self, other):
        return self.url == other.url


def run():
    a = Url("a")
    a.load("b")
    return a == Url("b")


run()
