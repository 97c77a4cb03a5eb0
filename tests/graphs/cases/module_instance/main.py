# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import registry
from registry import REGISTRY


def setup():
    REGISTRY.register("a")
    registry.REGISTRY.lookup("a")
