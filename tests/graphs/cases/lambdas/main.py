# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def double(x):
    return x * 2


def run(items):
    key = lambda x: double(x)
    key(1)
    return sorted(items, key=lambda v: -v)
