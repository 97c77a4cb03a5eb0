# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def log(msg):
    print(msg)
