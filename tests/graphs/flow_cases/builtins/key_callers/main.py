# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `bisect`'s functions (3.10+) and `list.sort` call their `key=` argument, as `sorted` does.
import bisect
from bisect import insort


def version_key(v):
    return v[0]


def name_key(v):
    return v[1]


def unused_key(v):
    return v


def find(rows, x):
    return bisect.bisect_left(rows, x, key=version_key)


def find_right(rows, x):
    return bisect.bisect_right(rows, x, key=version_key)


def add(rows, row):
    insort(rows, row, key=name_key)


rows = [(1, "a"), (3, "c")]
find(rows, 2)
find_right(rows, 2)
add(rows, (2, "b"))


def order(rows):
    rows.sort(key=name_key)


def order_local():
    items = [(2, "b"), (1, "a")]
    items.sort(key=version_key)


order(rows)
order_local()
