# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Boom(Exception):
    def __init__(self, msg):
        self.msg = msg

def fail():
    raise Boom("x")


try:
    fail()
except Boom:
    pass
