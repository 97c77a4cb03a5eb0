# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def handler():
    pass

class Box:
    pass

box = Box()
box.cb = handler
box.cb()
