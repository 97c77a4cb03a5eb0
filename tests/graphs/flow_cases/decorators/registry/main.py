# ruff: noqa  (deliberately unidiomatic: the patterns under test)
HANDLERS = []

def register(f):
    HANDLERS.append(f)
    return f

@register
def on_start():
    pass

on_start()
for h in HANDLERS:
    h()
