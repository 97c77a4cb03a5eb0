# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from ..tools import log


class Engine:
    def step(self):
        log("step")


def start():
    log("start")
    return Engine()
