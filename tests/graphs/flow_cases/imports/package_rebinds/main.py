# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from rules import block

block()
