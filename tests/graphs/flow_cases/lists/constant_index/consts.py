# ruff: noqa  (deliberately unidiomatic: the patterns under test)
WRITE = 2
