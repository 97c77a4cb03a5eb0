# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Errors:
    class Bad(Exception):
        def __init__(self):
            pass

def fail():
    raise Errors.Bad


try:
    fail()
except Errors.Bad:
    pass
