# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A list of placeholders filled later by index is a container from the start.
def on_open():
    pass

def on_close():
    pass

handlers = [None, None]
handlers[1] = on_close
handlers[1]()
table = {}
table["open"] = on_open
table["open"]()
