# ruff: noqa  (deliberately unidiomatic: the patterns under test)
__all__ = ["public"]


def public():
    return _private()


def _private():
    return 0


def hidden():
    return 1
