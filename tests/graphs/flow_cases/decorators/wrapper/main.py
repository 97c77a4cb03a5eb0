# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def deco(f):
    def wrapper():
        return f()
    return wrapper

@deco
def work():
    pass

work()
