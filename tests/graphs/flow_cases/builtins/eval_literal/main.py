# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A constant string handed to eval / exec is source: its calls are the calls of
# the scope that evaluates it (no namespace given: names resolve there).
def first():
    return 1

def second(x):
    return x

class Box:
    def __init__(self, v):
        self.v = v


def run():
    eval("second(first())")
    exec("b = Box(2)")


def other():
    pass


run()
eval("other()", {"other": first})
