# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from typing import Optional, Union


class Runner:
    def step(self):
        return 1


class Executor:
    def step(self):
        return 2


class Idle:
    def step(self):
        return 3


def make(n: int) -> Runner | Executor:
    if n == 1:
        return Runner()
    return Executor()


def make_any(n: int):
    if n == 1:
        return Runner()
    return Executor()


class Engine:
    backend: Union[Runner, Executor, None]

    def __init__(self, n: int):
        self.backend = make(n)
        self.other = make_any(n)

    def run(self, extra: Optional[Union[Executor, Idle]]):
        self.backend.step()
        self.other.step()
        extra.step()
        make(2).step()
