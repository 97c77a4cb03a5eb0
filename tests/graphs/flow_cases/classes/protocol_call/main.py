# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A value typed by a callable Protocol runs what was stored there, never the
# protocol's own `__call__` stub (a protocol is not instantiated, and no class
# here inherits the stub).
from typing import Protocol


class Handler(Protocol):
    def __call__(self, x: int) -> int: ...


def double(x):
    return 2 * x


class Registry:
    def __init__(self, handler: Handler):
        self.handler = handler

    def run(self, x):
        return self.handler(x)


Registry(double).run(3)
