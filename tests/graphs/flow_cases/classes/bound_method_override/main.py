# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A method taken as a value from an object (`get = self.theme.style_for`) is the
# method of that object's own class, as a call on the object would be: the
# overrides on the declared class's subclasses, and not an abstract declaration
# that they all replace (no object can still have it).
from abc import ABC, abstractmethod


class Theme(ABC):
    @abstractmethod
    def style_for(self, t): ...

    def background(self):
        return "none"


class Dark(Theme):
    def style_for(self, t):
        return "dark " + t


class Light(Theme):
    def style_for(self, t):
        return "light " + t

    def background(self):
        return "white"


class Syntax:
    def __init__(self, theme: Theme):
        self.theme = theme

    def highlight(self, tokens):
        get = self.theme.style_for
        return [get(t) for t in tokens]

    def back(self):
        get = self.theme.background
        return get()


def run(theme: Theme, tokens):
    s = Syntax(theme)
    return s.highlight(tokens), s.back()


run(Dark(), ["a"])
run(Light(), ["b"])
