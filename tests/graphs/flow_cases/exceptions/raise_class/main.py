# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Boom(Exception):
    def __init__(self):
        super().__init__("boom")

def fail():
    raise Boom

try:
    fail()
except Boom:
    pass
