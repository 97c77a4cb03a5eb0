# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def b():
    pass

fs = []
fs.append(a)
fs.append(b)
for f in fs:
    f()
