# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# Reading an attribute that a class binds to an object whose class defines
# `__get__` (a descriptor) runs that `__get__`, on an instance (`style.bold`) and
# on the class itself (`Style.bold`). A data descriptor (one with `__set__`) runs
# even where the instance stored a value of that name; a plain one is hidden by
# such a value, and a method or plain class attribute of that name runs nothing.
class Bit:
    def __init__(self, n):
        self.mask = 1 << n

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return bool(obj.bits & self.mask)


class Padding:
    def __get__(self, obj, objtype=None):
        return obj._padding

    def __set__(self, obj, value):
        obj._padding = (value, value)


class Cached:
    def __get__(self, obj, objtype=None):
        return 0


class Style:
    bold = Bit(0)
    italic = Bit(1)
    padding = Padding()
    size = Cached()
    name = "style"

    def __init__(self, bits):
        self.bits = bits
        self.size = 3  # hides the non-data descriptor on this instance

    def describe(self):
        return ("bold" if self.bold else "") + str(self.padding) + str(self.size) + self.name


def use(style: Style):
    return style.italic, Style.bold, style.describe()


s = Style(1)
s.padding = 2
use(s)
