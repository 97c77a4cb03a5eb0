# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def retry(times):
    def deco(f):
        def wrapper():
            return f()
        return wrapper
    return deco

@retry(3)
def work():
    pass

work()
