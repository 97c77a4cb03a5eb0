# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def cb():
    pass

def run(hook):
    hook()

opts = {"hook": cb}
run(**opts)
