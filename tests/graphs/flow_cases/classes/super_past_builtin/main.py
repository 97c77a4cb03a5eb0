# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Item:
    def __init__(self, trivia):
        self.trivia = trivia

    def describe(self):
        return self.trivia


class String(str, Item):
    # MRO: String, str, Item, object. str defines __new__ but not __init__ or
    # describe, so super() finds those on Item.
    def __new__(cls, value, trivia):
        return super().__new__(cls, value)

    def __init__(self, value, trivia):
        super().__init__(trivia)

    def describe(self):
        return super().describe()


class ParseError(ValueError):
    # ValueError has BaseException's __str__: super() stops at the builtin base.
    def __str__(self):
        return "parse: " + super().__str__()


String("a", 1).describe()
ParseError("x").__str__()
