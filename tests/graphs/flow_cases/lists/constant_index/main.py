# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# An index held in a module constant (here and imported) selects one slot.
from consts import WRITE

READ = 0

def read():
    pass

def seek():
    pass

def write():
    pass

ops = [read, seek, write]
ops[READ]()
ops[WRITE]()
