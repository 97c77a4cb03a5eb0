# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def run_all(fs):
    for f in fs:
        f()

hooks = []
hooks.extend([a])
run_all(hooks)
