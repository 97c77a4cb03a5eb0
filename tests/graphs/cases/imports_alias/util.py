# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def helper():
    return 1


def other():
    return helper()
