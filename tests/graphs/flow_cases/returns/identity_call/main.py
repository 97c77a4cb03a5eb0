# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A helper that returns its argument, called with different functions: each
# call's result is what that call passed in.
def pick(fn, default=None):
    if fn is None:
        return default
    return fn

def alpha():
    pass

def beta():
    pass

def run():
    a = pick(alpha)
    a()

def other():
    b = pick(beta)
    b()

run()
other()
