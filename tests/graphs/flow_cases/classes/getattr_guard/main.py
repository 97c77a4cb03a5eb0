# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A prefix dispatch under a membership guard (jinja2's parse_statement): the
# getattr asks only for the names the guard lets through, here spelt through a
# local alias of the same attribute chain, with nothing between the alias and
# the guard that could move the chain (a call that never returns, a list append).
from typing import NoReturn

_KEYWORDS = frozenset(["for", "if"])


class Token:
    def __init__(self, value):
        self.value = value


class Stream:
    def __init__(self, value):
        self.current = Token(value)


class Parser:
    def __init__(self, text):
        self.stream = Stream(text)
        self.stack = []

    def fail(self, msg) -> NoReturn:
        raise SyntaxError(msg)

    def parse_statement(self):
        token = self.stream.current
        if token.value == "":
            self.fail("empty")
        self.stack.append(token.value)
        if token.value in _KEYWORDS:
            f = getattr(self, f"parse_{self.stream.current.value}")
            return f()
        return self.parse_expression()

    def parse_for(self):
        return "for"

    def parse_if(self):
        return "if"

    def parse_expression(self):
        return "expr"

    def parse_tuple(self):
        return "tuple"


def main():
    for text in ("for", "if", "x", ""):
        try:
            Parser(text).parse_statement()
        except SyntaxError:
            pass


main()
