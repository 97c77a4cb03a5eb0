# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `type(name, bases, ns)` makes a class as a class statement does: a base whose
# metaclass is a project class hands the call to that metaclass, so its
# `__new__` and `__init__` run; a base with no project metaclass runs neither.
class Registry(type):
    def __new__(mcs, name, bases, ns):
        return super().__new__(mcs, name, bases, ns)

    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)


class Schema(metaclass=Registry):
    @classmethod
    def from_dict(cls, fields):
        return type("Generated", (cls,), dict(fields))


class Plain:
    pass


def plain(name):
    return type(name, (Plain,), {})


Schema.from_dict({"a": 1})
plain("P")
