# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def run(cb):
    cb(1)

def helper(x):
    pass

run(lambda x: helper(x))
