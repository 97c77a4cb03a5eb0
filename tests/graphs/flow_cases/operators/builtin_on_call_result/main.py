# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Span:
    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text

    def __len__(self):
        return len(self.text)

    @classmethod
    def parse(cls, text):
        return cls(text)


class Ranges:
    def __init__(self, bounds):
        self.bounds = bounds

    def __iter__(self):
        return iter(self.bounds)

    def __len__(self):
        return len(self.bounds)


def make_ranges(n) -> Ranges:
    return Ranges(list(range(n)))


def normalize(text):
    return str(Span.parse(text))


def width(text):
    return len(Span(text))


def empty(n):
    return not make_ranges(n)


def bounds(n):
    return tuple(make_ranges(n))


normalize("a")
width("abc")
empty(0)
bounds(2)
