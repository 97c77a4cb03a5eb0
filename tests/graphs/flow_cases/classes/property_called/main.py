# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Snapshot:
    def restore(self):
        pass


class Handler:
    def __call__(self, restore=False):
        return Snapshot()


class Source:
    def __init__(self):
        self._handler = Handler()

    # Calling a property's value: `src.state(...)` runs the getter, then calls
    # what it returns (the Handler instance: its __call__).
    @property
    def state(self) -> Handler:
        return self._handler

    # A property handing out a bound method: `src.stepper()` runs the getter, then step.
    @property
    def stepper(self):
        return self.step

    def step(self):
        pass

    def peek(self):
        self.state(restore=True).restore()
        self.stepper()


src = Source()
src.peek()
src.state()
