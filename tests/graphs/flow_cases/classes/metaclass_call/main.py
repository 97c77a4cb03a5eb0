# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# Calling a class whose metaclass defines __call__ runs that __call__; the
# class's own __new__ and __init__ run from it, when it hands the call on to
# type.__call__ (by name or through super()). A class of a metaclass without
# __call__ is constructed as usual, from the caller.
class Cached(type):
    def __call__(cls, *args, **kwargs):
        return type.__call__(cls, *args, **kwargs)


class Counted(type):
    def __call__(cls, *args):
        return super().__call__(*args)


class Lexer(metaclass=Cached):
    def __init__(self, name):
        self.name = name


class PythonLexer(Lexer):
    pass


class JsonLexer(Lexer):  # made by Cached too, but never called here
    def __init__(self, name, strict):
        self.strict = strict


class Shape(metaclass=Counted):
    def __new__(cls, *args):
        return super().__new__(cls)

    def __init__(self, sides):
        self.sides = sides


class Plain:
    def __init__(self):
        pass


def make():
    PythonLexer("py")
    Shape(3)
    Plain()


make()
