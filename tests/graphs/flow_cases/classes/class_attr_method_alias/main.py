# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A function bound in a class body under another name (`_parse = _parse_plain`)
# or stored on the class later (`Element._parse = Element._parse_cached`) is a
# method of the class: read through an instance it is bound like any method, so
# `self._parse(text, 0)` calls it with two arguments. A store on one instance
# (`self._parse = self._traced`) adds to what the class holds, and replaces it
# only for that instance: every call through another instance still reaches the
# class's functions.


class Element:
    def _parse_plain(self, text, loc):
        return loc + len(text)

    def _parse_cached(self, text, loc):
        return self._parse_plain(text, loc)

    _parse = _parse_plain

    def _traced(self, text, loc):
        return -1

    def trace(self):
        self._parse = self._traced

    def parse(self, text):
        return self._parse(text, 0)


class Word(Element):
    pass


def enable_cache():
    Element._parse = Element._parse_cached


def run():
    w = Word()
    w.parse("a")
    enable_cache()
    w.parse("b")
    d = Word()
    d.trace()
    d.parse("c")


run()
