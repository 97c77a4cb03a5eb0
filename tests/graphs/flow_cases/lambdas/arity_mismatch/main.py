# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A call whose only possible callee cannot bind its arguments still targets it:
# Python resolves the callee, then raises TypeError while binding. Where another
# candidate fits, the one that cannot bind is not this call's callee.
def run(cb):
    try:
        cb()
    except TypeError:
        pass


def either(flag):
    if flag:
        f = lambda: 1
    else:
        f = lambda x: x
    return f()


run(lambda x: x)
either(True)
