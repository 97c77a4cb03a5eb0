# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from .block import block
