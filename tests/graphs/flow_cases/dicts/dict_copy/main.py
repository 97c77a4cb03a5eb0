# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `dict(...)` makes a new dict holding what it was given: another mapping's
# values under their keys, the second item of each pair, each keyword's value.
def first():
    return 1


def second():
    return 2


def third():
    return 3


def fourth():
    return 4


table = {"a": first}
copy = dict(table)
copy["a"]()
pairs = dict([("b", second)])
pairs["b"]()
named = dict(c=third)
named["c"]()
both = dict(table, d=fourth)
both["d"]()
