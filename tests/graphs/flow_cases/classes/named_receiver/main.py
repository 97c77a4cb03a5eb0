# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import copy
import re
# A method name builtins have too (`match`, `get`, `update`) called on a receiver of
# unknown type is not guessed by the name alone (`d.get(k)` is a dict's), unless the
# receiver is named after a project class that has the method: `token` -> `Token`,
# `token_list` -> `TokenList`, with the overrides of their subclasses.


class Token:
    def match(self, kind, values=None):
        return kind == 1


class Keyword(Token):
    def match(self, kind, values=None):
        return True


class TokenList(Token):
    def get(self, i):
        return i


class Settings:
    def update(self, other):
        return other


def is_keyword(token):
    return token.match(1, ["SELECT"])


def first(token_list):
    return token_list.get(0)


def scan(regex, text):
    return regex.match(text)


def merge(d, other):
    d.update(other)
    return d.get("x")



# Copies made by outside code: their types are not known from the callers.
is_keyword(copy.copy(Keyword()))
is_keyword(copy.copy(Token()))
first(copy.copy(TokenList()))
scan(copy.copy(re.compile("a")), "abc")
merge(copy.copy({"x": 1}), {"y": 2})
