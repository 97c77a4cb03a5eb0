# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Plugin:
    def __init__(self):
        pass

def make(cls):
    return cls()

make(Plugin)
