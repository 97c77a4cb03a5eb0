# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def d1(f):
    def w1():
        return f()
    return w1

def d2(f):
    def w2():
        return f()
    return w2

@d1
@d2
def work():
    pass

work()
