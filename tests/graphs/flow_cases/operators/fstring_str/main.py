# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Color:
    def __init__(self, code):
        self.code = code

    def __str__(self):
        return "c" + self.code

    def __repr__(self):
        return "Color()"


class Money:
    def __format__(self, spec):
        return "1.00"

    def __str__(self):
        return "1"


class Bare:
    def __repr__(self):
        return "Bare()"


def show():
    red = Color("1")
    money, bare = Money(), Bare()
    line = f"{red}|{red!r}|{money:>6}|{bare}"
    return line


show()
