import registry
from registry import REGISTRY


def setup():
    REGISTRY.register("a")
    registry.REGISTRY.lookup("a")
