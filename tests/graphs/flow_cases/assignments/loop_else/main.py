# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def first():
    pass


def second():
    pass


def third():
    pass


def no_break(items):
    f = first
    while items:
        items = items[1:]
        f = second
    else:
        f = third
    f()


def with_break(items):
    f = first
    for x in items:
        if x:
            f = second
            break
    else:
        f = third
    f()


no_break([1, 2])
with_break([1])
with_break([])
