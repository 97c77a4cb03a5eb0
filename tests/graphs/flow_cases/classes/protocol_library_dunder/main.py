# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A Protocol may declare a method spelt like a special method that Python itself
# never calls (a library's own protocol, such as rich's `__rich_console__`): an
# object the protocol types is one of the classes defining it, as for a method
# of any other name, whether the protocol is named directly or through a Union
# alias. (Protocols of Python's own special methods, `__call__` or `__len__`,
# still make no class an implementer: nearly every class has some.)
from typing import Protocol, Union


class Renderable(Protocol):
    def __render__(self, width: int) -> list: ...


RenderableType = Union[Renderable, str]


class Panel:
    def __init__(self, title):
        self.title = title

    def __render__(self, width):
        return [self.title.center(width, "-")]


class Text:
    def __init__(self, s):
        self.s = s

    def __render__(self, width):
        return [self.s[:width]]


def render(obj: RenderableType, width: int):
    if isinstance(obj, str):
        return [obj]
    return obj.__render__(width)


def render_all(objs: list[Renderable]):
    return [line for obj in objs for line in obj.__render__(4)]


render(Panel("p"), 3)
render(Text("abc"), 2)
render("s", 1)
render_all([Text("xyz"), Panel("q")])
