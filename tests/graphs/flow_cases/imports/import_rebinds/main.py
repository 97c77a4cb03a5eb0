# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def local():
    pass


handler = local
from helpers import handler

handler()


def run():
    f = local
    from helpers import fallback as f

    f()


run()
