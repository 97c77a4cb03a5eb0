# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A getattr dispatch after a guard that leaves on anything else
# (`if kind not in KINDS: raise`): only the kinds the guard lets past are asked
# for, so `op_mul` (same prefix, called directly elsewhere) is not its callee.
KINDS = ("add", "sub")


class Calc:
    def run(self, kind, a, b):
        if kind not in KINDS:
            raise ValueError(kind)
        return getattr(self, "op_" + kind)(a, b)

    def op_add(self, a, b):
        return a + b

    def op_sub(self, a, b):
        return a - b

    def op_mul(self, a, b):
        return a * b

    def square(self, a):
        return self.op_mul(a, a)


c = Calc()
c.run("add", 1, 2)
c.run("sub", 3, 1)
c.square(3)
try:
    c.run("mul", 1, 2)
except ValueError:
    pass
