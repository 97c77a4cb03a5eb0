# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def on_event():
    pass

class Bus:
    def __init__(self, cb):
        self.cb = cb

    def fire(self):
        self.cb()

Bus(on_event).fire()
