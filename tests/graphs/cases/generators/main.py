# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def produce(i):
    return i


def gen(n):
    for i in range(n):
        yield produce(i)


def consume(x):
    return x


def run():
    for x in gen(3):
        consume(x)
    return [consume(y) for y in gen(2)]
