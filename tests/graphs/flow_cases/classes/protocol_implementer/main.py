# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# An object a Protocol types is one of a class implementing it: its methods and
# attributes are that class's, never the protocol's own stubs (a protocol is not
# instantiated, and no class here inherits from it). A call on an object of
# unknown type does not reach the stubs either.
from typing import ClassVar, Protocol


def plain(x):
    return x


class Step(Protocol):
    RULES: ClassVar[dict]

    def __init__(self, n: int) -> None: ...

    def run(self, x: int) -> int: ...


class Doubler:
    RULES = {"id": plain}

    def __init__(self, n):
        self.n = n

    def run(self, x):
        return self.RULES["id"](x) * 2


def pick() -> type[Step]:
    return Doubler


def apply(step: Step, x):
    return step.run(x) + step.RULES["id"](x)


def anything(obj, x):
    return obj.run(x)


cls = pick()
made = cls(3)
apply(made, 1)
anything(made, 2)
