# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def other():
    pass


def pick(flag):
    if flag:
        def f():
            pass
    else:
        f = other
    return lambda: f()


pick(True)()
pick(False)()
