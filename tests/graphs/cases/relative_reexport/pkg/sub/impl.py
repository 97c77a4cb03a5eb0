from ..tools import log


class Engine:
    def step(self):
        log("step")


def start():
    log("start")
    return Engine()
