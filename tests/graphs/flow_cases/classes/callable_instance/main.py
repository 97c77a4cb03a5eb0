# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Op:
    def __call__(self):
        pass

def run(f):
    f()

run(Op())
