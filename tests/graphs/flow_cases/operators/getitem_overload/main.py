# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from typing import Any, Literal, overload


class Block:
    def parse(self):
        return 1


class Inline:
    def parse(self):
        return 2


class Other:
    # Same method name on a class no subscript returns: a guess by name would reach it.
    def parse(self):
        return 3


class Parsers:
    def __init__(self):
        self.block = Block()
        self.inline = Inline()

    @overload
    def __getitem__(self, name: Literal["block"]) -> Block: ...

    @overload
    def __getitem__(self, name: Literal["inline"]) -> Inline: ...

    @overload
    def __getitem__(self, name: str) -> Any: ...

    def __getitem__(self, name: str) -> Any:
        return {"block": self.block, "inline": self.inline}[name]


@overload
def make(kind: Literal["block"]) -> Block: ...


@overload
def make(kind: Literal["inline"]) -> Inline: ...


def make(kind):
    return Block() if kind == "block" else Inline()


def first(p: Parsers):
    p["block"].parse()  # the overload the constant key selects


def any_key(p: Parsers, key):
    p[key].parse()  # a key not known: what the implementation returns, either parser


def built():
    make("inline").parse()  # the overload of a plain function


parsers = Parsers()
first(parsers)
any_key(parsers, "inline")
any_key(parsers, "block")
built()
Other()
