# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# Each call reaches the bindings of its name that can reach it: not a binding
# made after it in straight-line code, but both arms of a branch and what a
# loop's previous iteration bound.
def f1():
    pass

def f2():
    pass

def f3():
    pass

def straight():
    x = f1
    x()
    x = f2
    x()
    x = f3

def branches(flag):
    y = f1
    if flag:
        y = f2
    y()

def loop():
    z = f1
    for _ in range(2):
        z()
        z = f3

straight()
branches(True)
loop()
