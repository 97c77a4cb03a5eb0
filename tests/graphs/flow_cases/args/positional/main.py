# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def callback():
    pass

def apply(fn):
    fn()

apply(callback)
