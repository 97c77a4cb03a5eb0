# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Vec:
    def __init__(self, x):
        self.x = x

    def __add__(self, other):
        return Vec(self.x + other.x)

    def __neg__(self):
        return Vec(-self.x)

    def __eq__(self, other):
        return self.x == other.x

    def __bool__(self):
        return self.x != 0


def combine(a: Vec, b: Vec):
    c = a + b
    if a != b:
        c = -a
    if c:
        return c


combine(Vec(1), Vec(2))
