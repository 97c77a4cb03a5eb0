from .sub.impl import Engine, start

__all__ = ["Engine", "start"]
