# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from .sub.impl import Engine, start

__all__ = ["Engine", "start"]
