# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def first():
    pass


def second():
    pass


def run():
    a, b = first, second
    a, b = b, a
    a()


left, right = first, second
left, right = right, left
right()
run()
