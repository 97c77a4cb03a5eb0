# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A mixin calls a method it does not define and no base of its has: the
# instance is one of the classes that combine it with a sibling base, whose
# method runs (a scanner stage reading through a reader stage mixed in beside it).
class Reader:
    def peek(self):
        return "x"


class Scanner:
    def scan(self):
        return self.peek()


class Loader(Reader, Scanner):
    pass


Loader().scan()
