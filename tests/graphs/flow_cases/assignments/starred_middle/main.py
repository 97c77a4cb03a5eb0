# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `head, *middle, tail = ...`: the starred name is a new list of the slots in
# between, in order; the names after it count from the end.
def load():
    pass

def parse():
    pass

def check():
    pass

def emit():
    pass

def close():
    pass

head, *middle, tail = (load, parse, check, emit, close)
middle[1]()
tail()
*_, last_two, final = [load, parse, check]
last_two()
