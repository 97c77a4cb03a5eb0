# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def step():
    pass


def steps():
    yield step


def make():
    return steps()


def consume(it):
    for f in it:
        f()


consume(make())
