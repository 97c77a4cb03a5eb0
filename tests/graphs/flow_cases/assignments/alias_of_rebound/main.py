# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def first():
    pass


def second():
    pass


def run():
    step = first
    saved = step
    step = second
    saved()
    step()


current = first
previous = current
current = second
previous()
run()
