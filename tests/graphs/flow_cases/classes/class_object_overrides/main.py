# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A method looked up on a class object that may be a subclass: `cls` in a class
# method, an attribute or parameter typed `type[Reader]` / `Type[Reader]` (mistune's
# `DirectivePlugin.parser`). Each subclass's version may run; so may the
# declaration, abstract or not, since the class object may be `Reader` itself.
# The run takes one subclass per site; the others (and `Reader.read_title`,
# which `title_of(Reader, ...)` would reach) are listed in untraced.json.
from abc import ABC, abstractmethod
from typing import Type


class Reader(ABC):
    @staticmethod
    @abstractmethod
    def read_title(text):
        raise NotImplementedError()

    @classmethod
    def read_all(cls, text):
        return cls.read_title(text)


class RstReader(Reader):
    @staticmethod
    def read_title(text):
        return text


class MdReader(Reader):
    @staticmethod
    def read_title(text):
        return text


class Plugin:
    reader: Type[Reader]

    def title(self, text):
        return self.reader.read_title(text)


def title_of(reader: type[Reader], text):
    return reader.read_title(text)


p = Plugin()
p.reader = RstReader
p.title("a")
title_of(MdReader, "b")
MdReader.read_all("c")
