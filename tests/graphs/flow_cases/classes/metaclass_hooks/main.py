# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A class statement calls its metaclass's __new__ and __init__, from the scope
# that runs the statement: the metaclass named on the class, or inherited from
# a base (a subclass of a class with a metaclass has that metaclass too).
class Registry(type):
    def __new__(mcs, name, bases, ns):
        return super().__new__(mcs, name, bases, ns)

    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)


class Plugin(metaclass=Registry):
    def run(self):
        pass


class Gzip(Plugin):
    pass


class Plain:
    pass


def make():
    class Local(Gzip):
        pass

    return Local


make()
