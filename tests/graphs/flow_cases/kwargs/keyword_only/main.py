# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def fast():
    pass

def slow():
    pass

def pick(*, strategy):
    strategy()

pick(strategy=fast)
