# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def on_done():
    pass

def run(**hooks):
    hooks["done"]()

run(done=on_done)
